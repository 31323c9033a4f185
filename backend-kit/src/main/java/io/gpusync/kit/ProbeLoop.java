package io.gpusync.kit;

import io.gpusync.spi.Timeouts;

import io.gpusync.SyncException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A blocking wait built from probes alone — gpu-handle-types' default {@code wait_async}, for waiters whose API
 * has no blocking wait with a timeout: a short busy spin (catches completions microseconds away), then
 * {@link Thread#yield()}s, then sleeps that double from 1 µs up to 1 ms. Errors from
 * {@link SyncWaiter#isSignaled()} end the loop at once (a lost device never loops forever); an interrupt ends
 * it with {@link io.gpusync.SyncCancelledException} (the rules of {@link WaitLoop}).
 *
 * <p>Blocks the calling thread and burns CPU during the spin phase; the reactor adapter's spin-then-poll
 * scheduler serves probe-only waiters without a thread per wait.
 */
public final class ProbeLoop {
    private static final int SPINS = 64;
    private static final int YIELDS = 64;
    private static final long MAX_SLEEP_NANOS = 1_000_000L;

    private ProbeLoop() {
    }

    /**
     * Probes {@code waiter} until it is signalled or {@code timeout} has passed.
     *
     * @throws SyncTimeoutException                 after {@code timeout} (never earlier)
     * @throws io.gpusync.SyncCancelledException   if the thread is interrupted (the flag stays set)
     * @throws io.gpusync.SyncException             whatever the probe throws
     */
    public static void await(SyncWaiter waiter, Duration timeout) {
        await(timeout, waiter::isSignaled, waiter, () -> new SyncTimeoutException(waiter.backend(),
                waiter + " not signalled within " + Timeouts.describe(timeout)));
    }

    /**
     * Calls {@code probe} (a query that never blocks, such as a driver wait with a zero timeout) until it says
     * the point is signalled or {@code timeout} has passed, backing off between calls as above: for a waiter
     * whose driver has a blocking wait that must not be used (one that sleeps where the driver can lose a wake-up).
     *
     * @param what     what is waited on, for the cancellation message
     * @param timedOut the exception for a timeout
     * @throws io.gpusync.SyncCancelledException if the thread is interrupted (the flag stays set)
     * @throws SyncException                     whatever {@code probe} throws
     */
    public static void await(Duration timeout, BooleanSupplier probe, Object what,
                             Supplier<? extends SyncException> timedOut) {
        WaitLoop.await(timeout, Long.MAX_VALUE, new Backoff(probe), what, timedOut);
    }

    /** Spin, then yield, then sleep with a doubling step: one slice is one step and one probe. */
    private static final class Backoff implements WaitLoop.Slice {
        private final BooleanSupplier probe;
        private int steps;
        private long sleep = 1_000L;

        Backoff(BooleanSupplier probe) {
            this.probe = probe;
        }

        @Override
        public boolean await(long nanos) {
            if (nanos > 0 && steps++ > 0) { // the first slice probes at once
                if (steps <= SPINS) {
                    Thread.onSpinWait();
                } else if (steps <= SPINS + YIELDS) {
                    Thread.yield();
                } else {
                    LockSupport.parkNanos(this, Math.min(sleep, nanos));
                    sleep = Math.min(sleep * 2, MAX_SLEEP_NANOS);
                }
            }
            return probe.getAsBoolean();
        }
    }
}
