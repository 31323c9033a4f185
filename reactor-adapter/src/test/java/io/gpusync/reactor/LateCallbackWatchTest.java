package io.gpusync.reactor;

import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A spin-then-callback wait that outlives its spin budget is handed to the callback path, and its poller keeps
 * watching it: a driver whose callbacks come late (NVIDIA's OpenCL delivers {@code clSetEventCallback}
 * 120–240 µs after the status changes) no longer sets the wake latency of every wait past the spin. Here the
 * callback comes 20 ms late on a "driver" thread and the work takes about 2 ms; before the watch every wait
 * was seen ≥ 20 ms after its signal.
 */
class LateCallbackWatchTest {
    private static final long CALLBACK_LATE_NANOS = 20_000_000;
    private final ScheduledExecutorService driverThread = Executors.newSingleThreadScheduledExecutor();
    private final SyncEngine engine = GpuSync.builder().name("late-callback-watch").build();

    @AfterEach
    void close() {
        engine.dispose();
        driverThread.shutdownNow();
    }

    @Test
    void aWaitPastItsSpinIsSeenByItsPollerLongBeforeItsLateCallback() throws Exception {
        int waits = 40;
        long[] lateness = new long[waits];
        int byCallback = 0;
        for (int i = 0; i < waits; i++) {
            lateness[i] = signalToSeen(engine, 2_000_000, CALLBACK_LATE_NANOS); // the work: past the 50 µs spin budget
            if (lateness[i] >= CALLBACK_LATE_NANOS) {
                byCallback++;
            }
        }
        long[] settled = Arrays.copyOfRange(lateness, waits / 2, waits);
        Arrays.sort(settled);
        long median = settled[settled.length / 2];
        System.out.printf("LATE_CALLBACK_WATCH signal → seen: median %,d µs over the last %d waits (callback %,d µs late); "
                + "%d of %d waits ended by the callback%n", median / 1_000, settled.length,
                CALLBACK_LATE_NANOS / 1_000, byCallback, waits);
        assertThat(median).as("seen by the poller, not 20 ms later by the callback").isLessThan(CALLBACK_LATE_NANOS / 4);
    }

    /**
     * Measured in CudaLatency on the H200: after a hundred 1 µs kernels, 10 ms kernels on the same source were seen
     * 390 µs late (by the host function, later than a raw BlockingSync wait), because the source never learned their
     * window. Here: forty waits that end inside the spin, then waits of about 5 ms whose callback comes 300 µs after
     * the signal (as NVIDIA's OpenCL callbacks do). Before the fix every one of them was seen by the callback; now the
     * poller watches the source again and sees waits before their callback could have come. A wait seen less than
     * 300 µs after its signal cannot have been seen by the callback, so the count needs no timing margin. Most waits
     * are seen that way, but not all in every run: on a loaded machine some waits are seen late because the poller or
     * the subscriber was not on a core (AdaptiveProbingTest covers the window the source learns); the assertion is
     * that the poller watches the source again, not how closely.
     */
    @Test
    void aSourceWhoseWaitsMoveFromInsideTheSpinToPastItIsWatchedAgain() throws Exception {
        long callbackLate = 300_000;
        int shortOnes = 40; // enough for the source to learn them first (waits that end at once teach nothing)
        int waits = shortOnes + 120; // the pollers share the waits, and each learns its own sources
        long[] lateness = new long[waits];
        for (int i = 0; i < waits; i++) {
            lateness[i] = signalToSeen(engine, i < shortOnes ? 20_000 : 5_000_000, callbackLate);
        }
        long[] last = Arrays.copyOfRange(lateness, waits - 60, waits);
        long byPoller = Arrays.stream(last).filter(l -> l < callbackLate).count();
        Arrays.sort(last);
        System.out.printf("LATE_CALLBACK_WATCH after a change of length: %d of the last %d waits seen before their "
                + "callback could come; median %,d µs%n", byPoller, last.length, last[last.length / 2] / 1_000);
        assertThat(byPoller).as("waits of the changed source seen by the poller, before their callback (none before the "
                + "fix; the fewest in 100 runs here: 11 of 60)").isGreaterThanOrEqualTo(last.length / 10);
    }

    /**
     * A zero spin budget means no spinning: a spin-then-callback wait goes to its callback at once, and no poller
     * probes it, however well its source's completion times are known. (Before, the pollers still held such waits
     * through their source's learned window: CudaLatency's "no spin" rows on the H200 used 0.4 of a core for waits
     * of 1–10 ms.)
     */
    @Test
    void aZeroSpinBudgetLeavesEveryWaitToItsCallback() throws Exception {
        SyncEngine callbacksOnly = GpuSync.builder().name("callbacks-only").spinBudget(Duration.ZERO).build();
        try {
            long callbackLate = 3_000_000;
            int waits = 40;
            int byCallback = 0;
            for (int i = 0; i < waits; i++) {
                // a source of ≈ 1 ms waits: learnable, were anything learning
                if (signalToSeen(callbacksOnly, 1_000_000, callbackLate) >= callbackLate) {
                    byCallback++;
                }
            }
            assertThat(byCallback).as("every wait ended by its (late) callback, none by a poller's probe").isEqualTo(waits);
        } finally {
            callbacksOnly.dispose();
        }
    }

    /**
     * One wait on {@code engine} whose work takes {@code workNanos} and whose callback comes {@code callbackLate} after
     * the signal: how long after the signal the subscriber heard of it.
     */
    private long signalToSeen(SyncEngine on, long workNanos, long callbackLate) throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        SyncWaiter waiter = HostWaiters.cheapProbeWithLateCallback(timeline.at(1), callbackLate, driverThread);
        CompletableFuture<Long> seen = new CompletableFuture<>();
        on.await(waiter, Duration.ofSeconds(10))
                .subscribe(null, seen::completeExceptionally, () -> seen.complete(System.nanoTime()));
        LockSupport.parkNanos(workNanos);
        long signalledAt = System.nanoTime();
        timeline.signal(1);
        return seen.get(10, TimeUnit.SECONDS) - signalledAt;
    }

    @Test
    void aWatchedWaitThatIsCancelledLeavesNothingPendingAndItsLateCallbackDoesNothing() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        SyncWaiter waiter = HostWaiters.cheapProbeWithLateCallback(timeline.at(1), CALLBACK_LATE_NANOS, driverThread);
        CompletableFuture<String> outcome = new CompletableFuture<>();
        var subscription = engine.await(waiter, Duration.ofSeconds(10))
                .subscribe(null, e -> outcome.complete("error " + e), () -> outcome.complete("complete"));
        LockSupport.parkNanos(1_000_000); // handed over, watched
        subscription.dispose();
        timeline.signal(1);
        Thread.sleep(CALLBACK_LATE_NANOS / 1_000_000 * 2); // past the late callback
        assertThat(engine.pendingWaits()).isZero();
        assertThat(outcome).as("a cancelled wait hears nothing: neither the poller's probe nor the late callback")
                .isNotDone();
        assertThat(timeline.pendingWaits()).as("its registration was withdrawn").isZero();
    }
}
