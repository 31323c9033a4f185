package io.gpusync.cpu;

import io.gpusync.SyncTimeoutException;
import io.gpusync.spi.WakeableWaiter;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link WakeableWaiter#wakeWaiters()} on a host timeline's waiter: a thread parked in {@code await} returns
 * at once as if its timeout had passed, its registration withdrawn; the point is not touched. The waits here
 * are 60 s long, so a thread back within 10 s was woken.
 */
class CpuTimelineWakeTest {
    private static final Duration LONG = Duration.ofSeconds(60);

    @Test
    void aHostTimelineWaiterIsWakeable() {
        assertThat(new CpuTimeline().at(1).waiter()).isInstanceOf(WakeableWaiter.class);
    }

    @Test
    void aWakeEndsEveryParkedAwaitWithATimeoutAndWithdrawsItsRegistration() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        WakeableWaiter waiter = (WakeableWaiter) timeline.at(1).waiter();
        CompletableFuture<Throwable> first = awaitOnAnotherThread(waiter);
        CompletableFuture<Throwable> second = awaitOnAnotherThread(waiter);
        awaitPending(timeline, 2);

        waiter.wakeWaiters();

        assertThat(first.get(10, TimeUnit.SECONDS)).isInstanceOf(SyncTimeoutException.class);
        assertThat(second.get(10, TimeUnit.SECONDS)).isInstanceOf(SyncTimeoutException.class);
        assertThat(timeline.pendingWaits()).isZero();
        assertThat(waiter.isSignaled()).isFalse();
        assertThat(timeline.value()).isZero();
    }

    @Test
    void aWakeLeavesAwaitsOfOtherWaitersOfTheSameTimelineParked() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        WakeableWaiter woken = (WakeableWaiter) timeline.at(1).waiter();
        WakeableWaiter other = (WakeableWaiter) timeline.at(1).waiter();
        CompletableFuture<Throwable> wokenAwait = awaitOnAnotherThread(woken);
        CompletableFuture<Throwable> otherAwait = awaitOnAnotherThread(other);
        awaitPending(timeline, 2);

        woken.wakeWaiters();

        assertThat(wokenAwait.get(10, TimeUnit.SECONDS)).isInstanceOf(SyncTimeoutException.class);
        assertThat(otherAwait).isNotDone();
        timeline.signal(1);
        assertThat(otherAwait.get(10, TimeUnit.SECONDS)).as("signalled: no error").isNull();
    }

    @Test
    void aWakeWithNoThreadParkedChangesNothing() {
        CpuTimeline timeline = new CpuTimeline();
        WakeableWaiter waiter = (WakeableWaiter) timeline.at(1).waiter();

        waiter.wakeWaiters();

        assertThatThrownBy(() -> waiter.await(Duration.ofMillis(50))).isInstanceOf(SyncTimeoutException.class);
        timeline.signal(1);
        waiter.wakeWaiters();
        waiter.await(Duration.ofMillis(50)); // signalled: returns normally
    }

    @Test
    void anAwaitAbandonedOnItsWayInEndsAtOnceUnlessThePointIsSignalled() {
        CpuTimeline timeline = new CpuTimeline();
        WakeableWaiter waiter = (WakeableWaiter) timeline.at(1).waiter();

        assertThatThrownBy(() -> waiter.await(LONG, () -> true)).isInstanceOf(SyncTimeoutException.class);
        assertThat(timeline.pendingWaits()).isZero();

        timeline.signal(1);
        waiter.await(LONG, () -> true); // signalled: returns normally
    }

    private static CompletableFuture<Throwable> awaitOnAnotherThread(WakeableWaiter waiter) {
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread.ofPlatform().daemon(true).start(() -> {
            try {
                waiter.await(LONG);
                outcome.complete(null);
            } catch (Throwable e) {
                outcome.complete(e);
            }
        });
        return outcome;
    }

    /** Waits until {@code n} awaits are registered in the timeline (the threads are about to park or parked). */
    private static void awaitPending(CpuTimeline timeline, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (timeline.pendingWaits() < n) {
            assertThat(System.nanoTime() - deadline).as("awaits registered within 10 s").isNegative();
            Thread.sleep(1);
        }
    }
}
