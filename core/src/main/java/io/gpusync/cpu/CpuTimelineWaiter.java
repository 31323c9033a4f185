package io.gpusync.cpu;

import io.gpusync.BackendKind;
import io.gpusync.SyncException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.Deadline;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import io.gpusync.spi.Timeouts;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * The waiter of a {@link CpuTimeline} value. {@link #await} parks the calling thread until
 * {@link CpuTimeline#signal} reaches the value (no spinning); {@link #isSignaled()} is one volatile read;
 * {@link #onSignal} completes from the signalling thread with no thread waiting. Owns nothing native, so
 * {@link #close()} does nothing. Thread-safe.
 */
final class CpuTimelineWaiter implements SignalCallbackWaiter, BlockingWaiter {
    private final CpuTimeline timeline;
    private final long target;

    CpuTimelineWaiter(CpuTimeline timeline, long target) {
        this.timeline = Objects.requireNonNull(timeline, "timeline");
        this.target = target;
    }

    @Override
    public BackendKind backend() {
        return BackendKind.CPU;
    }

    @Override
    public boolean isSignaled() {
        return timeline.reached(target);
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        if (timeline.reached(target)) {
            return;
        }
        if (timeout.isZero()) {
            throw timedOut(timeout);
        }
        Deadline deadline = Deadline.after(timeout);
        ParkedThread node = new ParkedThread(target, Thread.currentThread());
        if (!timeline.enqueue(node)) {
            timeline.reached(target); // throws the failure if that is why
            return;
        }
        try {
            while (!node.fired) {
                long left = deadline.remainingNanos();
                if (left == 0) {
                    if (timeline.dequeue(node)) {
                        throw timedOut(timeout);
                    }
                    break; // fired concurrently with the deadline: report the outcome
                }
                if (left == Long.MAX_VALUE) {
                    LockSupport.park(this);
                } else {
                    LockSupport.parkNanos(this, left);
                }
            }
        } finally {
            if (!node.fired) {
                timeline.dequeue(node); // interrupted by an exception: leave nothing registered
            }
        }
        while (!node.fired) {
            Thread.onSpinWait(); // dequeue lost the race: the signaller is about to set fired
        }
        if (node.error != null) {
            throw node.error;
        }
    }

    @Override
    public CallbackRegistration onSignal(SignalListener listener) {
        Objects.requireNonNull(listener, "listener");
        if (timeline.reached(target)) { // throws the failure, which the caller sees as a failed registration
            listener.signalled();
            return CallbackRegistration.DONE;
        }
        Callback node = new Callback(target, listener, timeline);
        if (!timeline.enqueue(node)) {
            SyncException failure = timeline.failure();
            if (failure != null) {
                listener.failed(failure);
            } else {
                listener.signalled();
            }
            return CallbackRegistration.DONE;
        }
        return node;
    }

    @Override
    public Optional<SyncWaiter> rebindToValue(long value) {
        return Optional.of(new CpuTimelineWaiter(timeline, value));
    }

    private SyncTimeoutException timedOut(Duration timeout) {
        return new SyncTimeoutException(BackendKind.CPU, timeline + " did not reach "
                + Long.toUnsignedString(target) + " within " + Timeouts.describe(timeout));
    }

    @Override
    public boolean callsBackOnDriverThread() {
        return false; // listeners run inside onSignal or on the signalling thread
    }

    @Override
    public String toString() {
        return "CpuTimelineWaiter[" + timeline + " ≥ " + Long.toUnsignedString(target) + "]";
    }

    /** A thread parked in {@link #await}. */
    private static final class ParkedThread extends CpuTimeline.PendingNode {
        private final Thread thread;
        private volatile boolean fired;
        private SyncException error;

        ParkedThread(long target, Thread thread) {
            super(target);
            this.thread = thread;
        }

        @Override
        void fire(SyncException error) {
            this.error = error;
            this.fired = true;
            LockSupport.unpark(thread);
        }
    }

    /** A listener registered through {@link #onSignal}; cancelling it dequeues it in O(1). */
    private static final class Callback extends CpuTimeline.PendingNode implements CallbackRegistration {
        private final SignalListener listener;
        private final CpuTimeline timeline;

        Callback(long target, SignalListener listener, CpuTimeline timeline) {
            super(target);
            this.listener = listener;
            this.timeline = timeline;
        }

        @Override
        void fire(SyncException error) {
            if (error == null) {
                listener.signalled();
            } else {
                listener.failed(error);
            }
        }

        @Override
        public void cancel() {
            timeline.dequeue(this);
        }
    }
}
