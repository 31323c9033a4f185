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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The default timer's timeouts: they run on a timer thread of the engine's own, so user code that blocks every
 * Reactor {@code parallel} worker does not hold them; waits that share a duration share one {@link TimeoutQueue}
 * (one timer task), each still times out at its own deadline, a wait that terminates first leaves nothing behind,
 * and a timer that refuses the task fails the waits instead of leaving them without a timeout.
 */
class TimeoutQueueTest {
    private final SyncEngine engine = GpuSync.builder().name("timeout-queue-test").build();
    private final CpuTimeline timeline = new CpuTimeline();
    /** More distinct durations than the engine keeps queues for. */
    private static final int MAX_DISTINCT_DURATIONS = 70;

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
    void waitsTimeOutWhileUserCodeBlocksEveryParallelWorker() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Set<Thread> blocked = ConcurrentHashMap.newKeySet();
        try {
            // user code that blocks on Reactor's parallel workers (a blocking driver call, say): every one of them
            for (int i = 0; i < 4 * Schedulers.DEFAULT_POOL_SIZE && blocked.size() < Schedulers.DEFAULT_POOL_SIZE; i++) {
                Schedulers.parallel().schedule(() -> {
                    blocked.add(Thread.currentThread());
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                Thread.sleep(2);
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (blocked.size() < Schedulers.DEFAULT_POOL_SIZE && System.nanoTime() < until) {
                Thread.sleep(5);
            }
            assertThat(blocked).as("parallel workers blocked").hasSize(Schedulers.DEFAULT_POOL_SIZE);

            AtomicReference<Thread> timedOutOn = new AtomicReference<>();
            StepVerifier.create(engine.await(timeline.at(1), Duration.ofMillis(100)) // the queue's path
                            .doOnError(e -> timedOutOn.set(Thread.currentThread())))
                    .expectError(SyncTimeoutException.class)
                    .verify(Duration.ofSeconds(5));
            assertThat(timedOutOn.get().getName()).startsWith("gpusync-timeout-queue-test-timer-");
            for (int i = 0; i < MAX_DISTINCT_DURATIONS; i++) { // past the queues' limit: a task per wait, same timer
                engine.await(timeline.at(2), Duration.ofMillis(1_000 + i)).subscribe(null, e -> { });
            }
            StepVerifier.create(engine.await(timeline.at(2), Duration.ofMillis(50)))
                    .expectError(SyncTimeoutException.class)
                    .verify(Duration.ofSeconds(5));
        } finally {
            release.countDown();
        }
    }

    @Test
    void disposalEndsTheTimerThread() {
        StepVerifier.create(engine.await(timeline.at(1), Duration.ofMillis(10)))
                .expectError(SyncTimeoutException.class)
                .verify(Duration.ofSeconds(5));
        assertThat(timerThreads()).isNotEmpty();
        engine.dispose(); // on a thread that may block: returns once the engine's threads have ended
        assertThat(timerThreads()).isEmpty();
    }

    private static List<Thread> timerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("gpusync-timeout-queue-test-timer-") && t.isAlive())
                .toList();
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
