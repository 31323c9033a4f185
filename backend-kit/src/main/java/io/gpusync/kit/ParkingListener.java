package io.gpusync.kit;

import io.gpusync.spi.SignalListener;

import io.gpusync.SyncException;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * A {@link SignalListener} that wakes one parked thread: the blocking {@code await} of a waiter whose API
 * calls back (a {@code CpuTimeline}, OpenCL event callbacks, CUDA stream callbacks) registers one and calls
 * {@link #await}.
 *
 * <p>{@link #signalled()} / {@link #failed} record the outcome and unpark the thread; they only hand over,
 * never throw and may run on any thread (a driver's included). {@link #await} parks through
 * {@link WaitLoop} (so its interrupt rule applies) and, when the wait ends without the outcome — timeout or
 * interrupt —, withdraws the registration; if the withdrawal loses the race against a completion already in
 * flight, it reports that completion instead (a completion is never lost, nor reported twice).
 *
 * <p>{@link #wake()} ends the {@link #await} early, as if its timeout had passed (what a
 * {@link WakeableWaiter#wakeWaiters()} does to each thread parked in its waiter).
 *
 * <p>Single use: one listener per wait, awaited by the thread that created it. Thread-safe otherwise.
 */
public final class ParkingListener implements SignalListener {
    private final Thread thread = Thread.currentThread();
    private volatile boolean done;
    private volatile boolean woken;
    private SyncException error; // written before done

    /** A listener that wakes the calling thread. */
    public ParkingListener() {
    }

    /** Withdraws a registration. */
    @FunctionalInterface
    public interface Withdrawal {
        /**
         * Removes the registration if it is still pending.
         *
         * @return {@code true} if this call removed it: no completion will follow; {@code false} if a
         *         completion has run or is about to
         */
        boolean tryWithdraw();
    }

    @Override
    public void signalled() {
        done = true;
        LockSupport.unpark(thread);
    }

    @Override
    public void failed(SyncException error) {
        this.error = error;
        done = true;
        LockSupport.unpark(thread);
    }

    /**
     * Makes {@link #await} end as if its timeout had passed — it withdraws the registration and throws the
     * timeout exception — unless the outcome is recorded first (then {@code await} reports the outcome). A
     * wake before {@code await} starts parking is not lost. Any thread; never blocks, never throws.
     */
    public void wake() {
        woken = true;
        LockSupport.unpark(thread);
    }

    /** Whether an outcome has been recorded. */
    public boolean isDone() {
        return done;
    }

    /**
     * Parks until the outcome arrives, {@code timeout} passes, {@link #wake()} is called or the thread is
     * interrupted. A listener that is already done returns (or throws its failure) without parking.
     *
     * @param withdrawal withdraws the registration this listener was given to
     * @param what       what is waited on (for the cancellation message)
     * @param timedOut   the exception for a timeout
     * @throws SyncException                      the failure passed to {@link #failed}
     * @throws io.gpusync.SyncCancelledException if interrupted first (the flag stays set)
     */
    public void await(Duration timeout, Withdrawal withdrawal, Object what, Supplier<? extends SyncException> timedOut) {
        if (thread != Thread.currentThread()) {
            throw new IllegalStateException("a ParkingListener is awaited by the thread that created it");
        }
        try {
            WaitLoop.await(timeout, Long.MAX_VALUE, this::park, () -> woken, what, timedOut);
        } catch (RuntimeException | Error ended) {
            if (!done && withdrawal.tryWithdraw()) {
                throw ended; // withdrawn: no completion follows
            }
            while (!done) {
                Thread.onSpinWait(); // the completion removed the registration and is about to hand over
            }
        }
        SyncException e = error;
        if (e != null) {
            throw e;
        }
    }

    private boolean park(long nanos) {
        if (done || woken || nanos == 0) {
            return done;
        }
        if (nanos == Long.MAX_VALUE) {
            LockSupport.park(this);
        } else {
            LockSupport.parkNanos(this, nanos);
        }
        return done;
    }
}
