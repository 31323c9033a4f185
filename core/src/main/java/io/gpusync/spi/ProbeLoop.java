package io.gpusync.spi;

import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * A blocking wait built from probes alone — the seed's default {@code wait_async}, for waiters whose API
 * has no blocking wait with a timeout: a short busy spin (catches completions microseconds away), then
 * {@link Thread#yield()}s, then sleeps that double from 1 µs up to 1 ms. Errors from
 * {@link SyncWaiter#isSignaled()} end the loop at once (a lost device never loops forever).
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
     * @throws SyncTimeoutException         after {@code timeout} (never earlier)
     * @throws io.gpusync.SyncException     whatever the probe throws
     */
    public static void await(SyncWaiter waiter, Duration timeout) {
        Timeouts.requireValid(timeout);
        if (waiter.isSignaled()) {
            return;
        }
        Deadline deadline = Deadline.after(timeout);
        long sleep = 1_000L;
        for (int i = 0; ; i++) {
            if (deadline.hasPassed()) {
                throw new SyncTimeoutException(waiter.backend(),
                        waiter + " not signalled within " + Timeouts.describe(timeout));
            }
            if (i < SPINS) {
                Thread.onSpinWait();
            } else if (i < SPINS + YIELDS) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(Math.min(sleep, deadline.remainingNanos()));
                sleep = Math.min(sleep * 2, MAX_SLEEP_NANOS);
            }
            if (waiter.isSignaled()) {
                return;
            }
        }
    }
}
