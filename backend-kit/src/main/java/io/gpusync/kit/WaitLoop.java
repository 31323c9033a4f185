package io.gpusync.kit;

import io.gpusync.spi.Timeouts;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The one re-wait loop behind every blocking {@link io.gpusync.SyncWaiter#await}: it waits in
 * {@linkplain Slice slices} until the point is signalled, the deadline passes, or the thread is interrupted,
 * and applies gpusync's wait rules in one place:
 * <ul>
 *   <li>{@link Duration#ZERO} is one probe ({@code slice.await(0)}) and never blocks;</li>
 *   <li>a slice that returns early (a driver's early timeout, a spurious wake-up) is followed by another
 *       for the time left, so a timeout is never reported early; {@link io.gpusync.SyncPoint#FOREVER} and
 *       any timeout beyond 292 years loop until signalled;</li>
 *   <li>no slice is longer than {@code maxSliceNanos}, so a native wait that cannot be interrupted is
 *       re-checked at least that often;</li>
 *   <li><b>the interrupt rule</b>: a thread that is (or becomes) interrupted before the point is signalled
 *       ends the wait with {@link SyncCancelledException} at the next slice boundary, after one last probe,
 *       and its interrupt flag stays set;</li>
 *   <li>a driver error thrown by a slice ends the loop at once (it is never turned into a timeout);</li>
 *   <li>a {@linkplain WakeableWaiter wakeable} waiter's loop also ends, as if its deadline had passed, after
 *       a slice that returns unsignalled while its {@code woken} condition holds.</li>
 * </ul>
 *
 * <p><b>Threading and blocking.</b> Stateless and thread-safe; blocks the calling thread for as long as the
 * slices do. Never call it on an event loop.
 */
public final class WaitLoop {
    /**
     * The longest a native wait that ignores interrupts should block at a time (50 ms): how late an interrupt
     * may be noticed. Parking slices ({@link java.util.concurrent.locks.LockSupport}) wake on interrupt and
     * need no bound.
     */
    public static final long INTERRUPT_CHECK_NANOS = 50_000_000L;

    private WaitLoop() {
    }

    /** One bounded wait of the loop. */
    @FunctionalInterface
    public interface Slice {
        /**
         * Waits at most {@code nanos} for the point and says whether it is signalled. {@code 0} asks for a
         * probe; {@link Long#MAX_VALUE} (only when {@code maxSliceNanos} is {@link Long#MAX_VALUE} and the
         * wait is forever) asks to wait until signalled or woken. May return {@code false} early.
         *
         * @throws SyncException on a driver failure, which ends the wait
         */
        boolean await(long nanos);
    }

    /**
     * Waits for the point that {@code slice} waits on.
     *
     * @param timeout       how long to wait; {@link Duration#ZERO} probes
     * @param maxSliceNanos the longest single slice ({@link #INTERRUPT_CHECK_NANOS} for native waits,
     *                      {@link Long#MAX_VALUE} for parking)
     * @param what          what is waited on, for the cancellation message ({@code toString()} is called
     *                      only then)
     * @param timedOut      the exception for a timeout
     * @throws SyncCancelledException   if the thread was interrupted (the flag stays set)
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public static void await(Duration timeout, long maxSliceNanos, Slice slice, Object what,
                             Supplier<? extends SyncException> timedOut) {
        await(timeout, maxSliceNanos, slice, () -> false, what, timedOut);
    }

    /**
     * Waits for the point that {@code slice} waits on, like {@link #await(Duration, long, Slice, Object,
     * Supplier)}, and also ends with {@code timedOut}, before the deadline, after a slice that returns
     * {@code false} while {@code woken} says {@code true}: the loop of a {@link WakeableWaiter}, whose
     * {@link WakeableWaiter#wakeWaiters()} makes the slice return early and {@code woken} true.
     *
     * @param woken read after each slice that returns unsignalled; must not block
     */
    public static void await(Duration timeout, long maxSliceNanos, Slice slice, BooleanSupplier woken, Object what,
                             Supplier<? extends SyncException> timedOut) {
        Timeouts.requireValid(timeout);
        if (maxSliceNanos <= 0) {
            throw new IllegalArgumentException("maxSliceNanos must be positive: " + maxSliceNanos);
        }
        if (timeout.isZero()) {
            if (slice.await(0)) {
                return;
            }
            throw timedOut.get();
        }
        Deadline deadline = Deadline.after(timeout);
        while (true) {
            if (Thread.currentThread().isInterrupted()) {
                if (slice.await(0)) {
                    return;
                }
                throw cancelled(what);
            }
            long left = deadline.remainingNanos();
            if (slice.await(Math.min(left, maxSliceNanos))) {
                return;
            }
            if ((deadline.hasPassed() || woken.getAsBoolean()) && !Thread.currentThread().isInterrupted()) {
                throw timedOut.get();
            }
        }
    }

    /** {@link SyncCancelledException} for an interrupted wait on {@code what}; leaves the flag as it is. */
    public static SyncCancelledException cancelled(Object what) {
        return new SyncCancelledException("wait on " + what + " cancelled: the waiting thread was interrupted");
    }

    /** Throws {@link #cancelled} if the current thread is interrupted (keeping the flag). */
    public static void checkInterrupt(Object what) {
        if (Thread.currentThread().isInterrupted()) {
            throw cancelled(what);
        }
    }
}
