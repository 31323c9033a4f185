package io.gpusync.cpu;

import io.gpusync.BackendKind;
import io.gpusync.SyncException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.kit.ParkingListener;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import io.gpusync.spi.Timeouts;
import io.gpusync.spi.WakeableWaiter;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * The waiter of a {@link CpuTimeline} value. {@link #await} parks the calling thread until
 * {@link CpuTimeline#signal} reaches the value (no spinning; an interrupt ends it at once with
 * {@link io.gpusync.SyncCancelledException}, the flag kept set); {@link #isSignaled()} is one volatile read;
 * {@link #onSignal} completes from the signalling thread with no thread waiting. Owns nothing native, so
 * {@link #close()} does nothing. Thread-safe.
 *
 * <p>Wakeable: {@link #wakeWaiters()} unparks every thread now parked in this waiter's {@code await}, which
 * then withdraws its registration from the timeline and throws {@link SyncTimeoutException}. The set of
 * parked threads is made at the first {@code await} that parks, so a waiter served by callbacks alone
 * carries one null field.
 */
final class CpuTimelineWaiter implements SignalCallbackWaiter, WakeableWaiter {
    private static final VarHandle PARKED;

    static {
        try {
            PARKED = MethodHandles.lookup().findVarHandle(CpuTimelineWaiter.class, "parked", Set.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final CpuTimeline timeline;
    private final long target;
    /** The listeners of the threads now parked in {@link #await}; null until one parks. */
    @SuppressWarnings("unused") // through PARKED
    private volatile Set<ParkingListener> parked;

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
        await(timeout, () -> false);
    }

    /** {@link #await(Duration)} that also ends once {@code abandoned} holds; see {@link WakeableWaiter}. */
    @Override
    public void await(Duration timeout, BooleanSupplier abandoned) {
        Timeouts.requireValid(timeout);
        if (timeline.reached(target)) {
            return;
        }
        if (timeout.isZero()) {
            throw timedOut(timeout);
        }
        ParkingListener parked = new ParkingListener();
        Set<ParkingListener> awaits = parkedAwaits();
        awaits.add(parked); // before the registration: a wake once it is visible in the timeline is not lost
        try {
            if (abandoned.getAsBoolean()) {
                parked.wake(); // registered for wakes first: an abandonment after this check is woken
            }
            Callback node = new Callback(target, parked, timeline);
            if (!timeline.enqueue(node)) {
                timeline.reached(target); // throws the failure if that is why
                return;
            }
            parked.await(timeout, node::tryCancel, this, () -> timedOut(timeout));
        } finally {
            awaits.remove(parked);
        }
    }

    /** Wakes every thread now parked in {@link #await}; see {@link WakeableWaiter#wakeWaiters()}. */
    @Override
    public void wakeWaiters() {
        Set<ParkingListener> awaits = parked;
        if (awaits != null) {
            for (ParkingListener p : awaits) {
                p.wake();
            }
        }
    }

    @SuppressWarnings("unchecked")
    private Set<ParkingListener> parkedAwaits() {
        Set<ParkingListener> awaits = parked;
        if (awaits == null) {
            Set<ParkingListener> made = ConcurrentHashMap.newKeySet(2);
            Set<ParkingListener> won = (Set<ParkingListener>) PARKED.compareAndExchange(this, null, made);
            awaits = won == null ? made : won;
        }
        return awaits;
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

        /** @return whether this call dequeued the node (no completion follows) */
        boolean tryCancel() {
            return timeline.dequeue(this);
        }

        @Override
        public void cancel() {
            tryCancel();
        }
    }
}
