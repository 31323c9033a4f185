package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.kit.Deadline;
import io.gpusync.spi.Timeouts;
import io.gpusync.kit.WaitLoop;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The blocking wait shared by the CUDA waiters: spin briefly (a probe sees short work end soonest), then park
 * behind a stream callback (no CPU burnt while long work runs). Sleeping in short steps instead would be worse
 * than both: timer slack makes each step late. The figures behind the choices are in
 * {@code benchmarks/RESULTS.md}.
 *
 * <ol>
 *   <li><b>Spin</b> for {@link #SPIN_NANOS} (about what the stream-callback path takes anyway, so a completion the
 *       spin catches is never slower than parking would have been), probing between
 *       {@link Thread#onSpinWait()}s.</li>
 *   <li><b>Arm</b> a wake-up (a CUDA stream callback that unparks this thread) and <b>park</b>. The thread
 *       wakes when the stream callback runs, at the deadline, on interrupt, and every slice (1 ms doubling to
 *       64 ms) to probe once more. When the context gets a sticky error the callback runs with the error and
 *       {@link CudaFaultWatch} fails the wake-up (the thread then throws {@link io.gpusync.DeviceLostException}
 *       at once); the periodic probe is the second line of defence.</li>
 *   <li>If no wake-up can be armed (the arm returns {@code null}), probe with a park backoff instead: 20 µs
 *       doubling to 1 ms.</li>
 * </ol>
 *
 * <p>Timeouts: {@link Duration#ZERO} probes once; anything else waits at least that long before
 * {@link SyncTimeoutException} (a final probe at the deadline decides); forever is forever. Cancellation: an
 * interrupt ends the wait with {@link SyncCancelledException} and leaves the interrupt flag set. Probe errors
 * end the wait at once.
 */
final class SpinThenPark {
    static final long SPIN_NANOS = 50_000L;
    static final long ARMED_FIRST_SLICE_NANOS = 1_000_000L;
    static final long ARMED_MAX_SLICE_NANOS = 64_000_000L;
    static final long BACKOFF_FIRST_NANOS = 20_000L;
    static final long BACKOFF_MAX_NANOS = 1_000_000L;

    private SpinThenPark() {
    }

    /** What the loop waits on. */
    interface Target {
        /** Non-blocking probe; throws on a driver error. */
        boolean probe();

        /**
         * Arms a wake-up that unparks {@code thread} once the target is signalled; {@code null} if none can be
         * armed (then the loop backs off). May throw a fatal error.
         */
        Armed arm(Thread thread);
    }

    /** An armed wake-up. */
    interface Armed {
        /** Whether the wake-up has fired (the target is signalled). */
        boolean fired();

        /**
         * The error the wake-up was failed with (its context faulted, its producer closed), or null. Checked
         * before every probe, so a wait woken by the fault watch ends at once.
         */
        SyncException failure();

        /** Withdraws the wake-up if it has not fired; idempotent. */
        void cancel();
    }

    /** The next slice of a doubling sequence, capped. Package-private for tests. */
    static long nextSlice(long slice, long max) {
        return slice >= max / 2 ? max : slice * 2;
    }

    static void await(Target target, Duration timeout, BackendKind backend, Supplier<String> what) {
        await(target, timeout, SPIN_NANOS, backend, what);
    }

    static void await(Target target, Duration timeout, long spinNanos, BackendKind backend, Supplier<String> what) {
        Timeouts.requireValid(timeout);
        if (target.probe()) {
            return;
        }
        if (timeout.isZero()) {
            throw timedOut(backend, what, timeout);
        }
        Deadline deadline = Deadline.after(timeout);
        long spinEnd = System.nanoTime() + Math.min(spinNanos, deadline.remainingNanos());
        while (System.nanoTime() - spinEnd < 0) {
            checkInterrupt(what);
            Thread.onSpinWait();
            if (target.probe()) {
                return;
            }
        }
        Duration left = Timeouts.isForever(timeout) ? timeout : Duration.ofNanos(deadline.remainingNanos());
        if (left.isZero()) {
            if (target.probe()) {
                return;
            }
            throw timedOut(backend, what, timeout);
        }
        Armed armed = target.arm(Thread.currentThread());
        try {
            // the re-wait loop (interrupt rule, never early) of every blocking wait; each slice parks at most the
            // current probe interval, which doubles: the armed wake-up or the fault watch usually ends it first
            long[] interval = {armed != null ? ARMED_FIRST_SLICE_NANOS : BACKOFF_FIRST_NANOS};
            long maxInterval = armed != null ? ARMED_MAX_SLICE_NANOS : BACKOFF_MAX_NANOS;
            WaitLoop.await(left, Long.MAX_VALUE, nanos -> {
                if (woken(armed)) {
                    return true;
                }
                if (nanos > 0) {
                    LockSupport.parkNanos(target, Math.min(nanos, interval[0]));
                    interval[0] = nextSlice(interval[0], maxInterval);
                    if (woken(armed)) {
                        return true;
                    }
                }
                return target.probe();
            }, new Object() {
                @Override
                public String toString() {
                    return what.get();
                }
            }, () -> timedOut(backend, what, timeout));
        } finally {
            if (armed != null) {
                armed.cancel();
            }
        }
    }

    /** Whether the armed wake-up has fired; throws the error it was failed with. */
    private static boolean woken(Armed armed) {
        if (armed == null) {
            return false;
        }
        if (armed.fired()) {
            return true;
        }
        SyncException failure = armed.failure();
        if (failure != null) {
            throw failure;
        }
        return false;
    }

    private static void checkInterrupt(Supplier<String> what) {
        if (Thread.currentThread().isInterrupted()) {
            throw WaitLoop.cancelled(what.get());
        }
    }

    static SyncTimeoutException timedOut(BackendKind backend, Supplier<String> what, Duration timeout) {
        return new SyncTimeoutException(backend, what.get() + " not signalled within " + Timeouts.describe(timeout));
    }

    /**
     * An {@link Armed} that unparks one thread: an event's waker ({@link EventWakeup}) or a timeline listener
     * (a {@link io.gpusync.spi.SignalListener}).
     */
    static final class ParkingSlot implements EventWakeup.Waker, io.gpusync.spi.SignalListener, Armed {
        private final Thread thread;
        private volatile boolean fired;
        private volatile SyncException failure;
        private volatile Runnable withdrawal;

        ParkingSlot(Thread thread) {
            this.thread = thread;
        }

        /** What {@link #cancel()} runs to withdraw the registration (an event waker's, a timeline listener's). */
        void withdrawal(Runnable w) {
            this.withdrawal = w;
        }

        @Override
        public void signalled() {
            fire();
        }

        @Override
        public void failed(SyncException error) {
            fail(error);
        }

        @Override
        public void fire() {
            fired = true;
            LockSupport.unpark(thread);
        }

        @Override
        public void fail(SyncException error) {
            failure = error;
            LockSupport.unpark(thread);
        }

        @Override
        public boolean fired() {
            return fired;
        }

        @Override
        public SyncException failure() {
            return failure;
        }

        @Override
        public void cancel() {
            Runnable w = withdrawal;
            if (w != null) {
                w.run();
            }
        }
    }
}
