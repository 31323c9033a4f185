package io.gpusync.reactor;

import io.gpusync.SyncTimeoutException;
import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The default timer's timeouts: waits that share a duration share one {@link TimeoutQueue} (one timer task),
 * each still times out at its own deadline, a wait that terminates first leaves nothing behind, and a timer that
 * refuses the task fails the waits instead of leaving them without a timeout.
 */
class TimeoutQueueTest {
    private final SyncEngine engine = GpuSync.builder().name("timeout-queue-test").build();
    private final CpuTimeline timeline = new CpuTimeline();

    @AfterEach
    void dispose() {
        engine.dispose();
    }

    @Test
    void waitsSharingATimeoutEachTimeOutNoEarlierThanTheirOwnDeadline() throws Exception {
        int n = 2_000;
        Duration timeout = Duration.ofMillis(150);
        CountDownLatch done = new CountDownLatch(n);
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        AtomicInteger early = new AtomicInteger();
        for (int i = 0; i < n; i++) {
            long start = System.nanoTime();
            engine.await(timeline.at(1 + i), timeout).subscribe(null, e -> {
                if (System.nanoTime() - start < timeout.toNanos()) {
                    early.incrementAndGet();
                }
                errors.add(e);
                done.countDown();
            }, done::countDown);
            if (i == n / 2) {
                Thread.sleep(50); // the second half has later deadlines than the first
            }
        }
        assertThat(done.await(20, TimeUnit.SECONDS)).isTrue();
        assertThat(errors).hasSize(n).allSatisfy(e -> assertThat(e).isInstanceOf(SyncTimeoutException.class));
        assertThat(early.get()).as("waits timed out before their deadline").isZero();
        assertThat(engine.pendingWaits()).isZero();
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void aWaitSignalledBeforeItsTimeoutLeavesNothingBehind() {
        Duration hour = Duration.ofHours(1);
        for (int i = 1; i <= 100_000; i++) {
            Disposable d = engine.await(timeline.at(i), hour).subscribe();
            timeline.signal(i);
            assertThat(d.isDisposed()).isTrue();
        }
        // terminated waits are dropped when the ring fills: the queue never holds more than one ring of them
        assertThat(engine.timeoutsHeld()).isLessThanOrEqualTo(64);
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void aTimerThatRefusesTheTaskFailsTheWaitsItHeld() {
        Scheduler refusing = Schedulers.newSingle("refusing-timer");
        refusing.dispose();
        TimeoutQueue queue = new TimeoutQueue(Duration.ofSeconds(1).toNanos(), refusing);
        List<Throwable> outcomes = new ArrayList<>();
        OutcomeSink sink = (wait, outcome) -> outcomes.add(outcome);
        PendingWait first = new PendingWait(sink, timeline.at(5).waiter(), Duration.ofSeconds(1), null, null);
        queue.add(first);
        assertThat(first.isDone()).isTrue();
        assertThat(outcomes).singleElement().isInstanceOf(RejectedExecutionException.class);
        assertThat(queue.held()).isZero();
    }

    @Test
    void underVirtualTimeTheQueueFollowsTheReplacedTimer() {
        for (int round = 0; round < 2; round++) { // a second virtual clock replaces the first one's queue
            StepVerifier.withVirtualTime(() -> engine.await(timeline.at(1_000_000), Duration.ofSeconds(30)))
                    .expectSubscription()
                    .expectNoEvent(Duration.ofSeconds(29))
                    .thenAwait(Duration.ofSeconds(1))
                    .expectError(SyncTimeoutException.class)
                    .verify(Duration.ofSeconds(5));
            VirtualTimeScheduler.reset();
        }
        assertThat(engine.pendingWaits()).isZero();
    }
}
