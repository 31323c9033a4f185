package io.gpusync.cuda;

import io.gpusync.SyncException;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The stream-callback wake-up of one {@code CUevent}, shared by every wait on it: at most <em>one</em> callback is
 * outstanding per event, however many waits — engine callbacks, blocking awaits, and the repeated short awaits of
 * a caller that slices its wait — register and withdraw meanwhile. A launched callback cannot be withdrawn, so
 * one per wait would pile up behind an event held back by a host gate until the driver blocked the waiting thread.
 *
 * <p>{@link #add} registers a {@link Waker} and arms the callback if none is outstanding
 * ({@link StreamCallbackBudget#arm}: at once, or deferred while the driver has no room — a deferred arm holds the
 * event through the waiter's claim and is probed meanwhile); the returned handle withdraws the waker (the callback
 * stays, and serves the next waker). When the callback runs, every waker present fires; when its context faults
 * or its producer closes ({@link StreamCallbacks.Slot#fail}), every waker fails. Whoever removes a waker from the
 * set owns its outcome, so each fires, fails or is withdrawn exactly once. Thread-safe; the callback's side only
 * hands over.
 *
 * <p>An event recorded by gpusync on a stream it owns has an {@link StreamOrder}: while anyone waits, the wake-up is a
 * member of its stream's order instead of arming a callback of its own, and the order's cover and sweeps fire it.
 */
final class EventWakeup implements StreamCallbacks.Slot, StreamOrder.Member {
    /** One registered wait. Runs on a driver thread (fire) or the fault watch / closing thread (fail). */
    interface Waker {
        void fire();

        void fail(SyncException error);
    }

    private final CudaDriverService service;
    private final MemorySegment event;
    private final MemorySegment context;
    private final OwnerLifetime lifetime;
    /** The waiter's hold on the event: a deferred arm keeps the event alive with it. */
    private final NativeAnchor.Claim claim;
    /** One non-blocking probe of the event ({@code cuEventQuery}): how a deferred arm learns it is complete. */
    private final java.util.function.BooleanSupplier probe;
    private final Set<Waker> wakers = ConcurrentHashMap.newKeySet();
    /** A stream callback is outstanding. No lock: the stream callback's side must never wait for an arming thread. */
    private final AtomicBoolean armed = new AtomicBoolean();
    /** The order of the owned stream that recorded the event, or null: then the event has a callback of its own. */
    private final StreamOrder order;
    private final long seq;

    EventWakeup(CudaDriverService service, MemorySegment event, MemorySegment context, OwnerLifetime lifetime,
                NativeAnchor.Claim claim, java.util.function.BooleanSupplier probe) {
        this(service, event, context, lifetime, claim, probe, null, 0);
    }

    /**
     * A wake-up that joins {@code order} (as its {@code seq}-th event) while anyone waits, instead of arming a
     * stream callback of its own: the order's cover and sweeps complete it.
     */
    EventWakeup(CudaDriverService service, MemorySegment event, MemorySegment context, OwnerLifetime lifetime,
                NativeAnchor.Claim claim, java.util.function.BooleanSupplier probe, StreamOrder order, long seq) {
        this.order = order;
        this.seq = seq;
        this.service = service;
        this.event = event;
        this.context = context;
        this.lifetime = lifetime;
        this.claim = claim;
        this.probe = probe;
    }

    /**
     * Registers {@code waker}; arms the event's stream callback unless one is outstanding.
     *
     * @return the withdrawal: {@code true} if it removed the waker (which then never fires or fails)
     * @throws SyncException if arming fails (the waker is then not registered)
     */
    Withdrawal add(Waker waker) {
        wakers.add(waker);
        if (order != null) {
            if (armed.compareAndSet(false, true)) { // here: "is in the order"
                try {
                    order.join(this);
                } catch (RuntimeException e) {
                    armed.set(false);
                    wakers.remove(waker);
                    if (e instanceof SyncException se) {
                        fail(se);
                    }
                    throw e;
                }
            }
        } else if (armed.compareAndSet(false, true)) {
            long key = service.callbacks().register(context, lifetime, this);
            try {
                service.budget().arm(new Arm(key));
            } catch (RuntimeException e) {
                service.callbacks().cancel(key);
                armed.set(false);
                wakers.remove(waker);
                if (e instanceof SyncException se) {
                    fail(se); // wakers that counted on this arming must not wait for a stream callback that never came
                }
                throw e;
            }
        }
        if (lifetime != null && lifetime.ended() && wakers.remove(waker)) {
            waker.fail(lifetime.cancelled()); // closed while registering: the owner's sweep may have missed it
            return () -> false;
        }
        return () -> wakers.remove(waker);
    }

    /**
     * An engine's probe of the event (the caller holds it): through its stream's order when it has one, which may
     * answer without a driver call ({@link StreamOrder#probe}), else one query.
     */
    boolean probeThroughOrder() {
        if (order == null) {
            return probe.getAsBoolean();
        }
        if (lifetime != null) {
            lifetime.check(); // as the query would: a closed producer's events answer with its cancellation
        }
        return order.probe(this);
    }

    /** Wakers registered (tests). */
    int wakers() {
        return wakers.size();
    }

    /** Whether a stream callback is outstanding (tests). */
    boolean armed() {
        return armed.get();
    }

    @Override
    public void fire() {
        armed.set(false);
        for (Waker w : wakers) {
            if (wakers.remove(w)) {
                try {
                    w.fire();
                } catch (RuntimeException | Error t) { // one throwing listener must not strand the others
                    System.getLogger(EventWakeup.class.getName()).log(System.Logger.Level.WARNING,
                            "a CUDA event waker threw", t);
                }
            }
        }
    }

    @Override
    public void fail(SyncException error) {
        armed.set(false);
        for (Waker w : wakers) {
            if (wakers.remove(w)) {
                try {
                    w.fail(error);
                } catch (RuntimeException | Error t) {
                    System.getLogger(EventWakeup.class.getName()).log(System.Logger.Level.WARNING,
                            "a CUDA event waker threw while failing", t);
                }
            }
        }
    }

    // ---- StreamOrder.Member: the wake-up as one event of its stream's order ----

    @Override
    public long seq() {
        return seq;
    }

    @Override
    public boolean complete() {
        return probe.getAsBoolean();
    }

    @Override
    public void completed() {
        fire();
    }

    @Override
    public void failed(SyncException error) {
        fail(error);
    }

    @Override
    public boolean wanted() {
        return !wakers.isEmpty();
    }

    @Override
    public void dropped() {
        armed.set(false);
        if (!wakers.isEmpty() && armed.compareAndSet(false, true)) { // a waiter came while it was being dropped
            try {
                order.join(this);
            } catch (RuntimeException e) {
                armed.set(false);
                if (e instanceof SyncException se) {
                    fail(se);
                }
                throw e;
            }
        }
    }

    @Override
    public void hold() {
        claim.enter();
    }

    @Override
    public void leave() {
        claim.exit();
    }

    @Override
    public void armBehind(long key) {
        service.callbacks().launchAfterEvent(context, event, key);
    }

    /** The arm of this event's stream callback, now or once the driver has room ({@link StreamCallbackBudget}). */
    private final class Arm extends StreamCallbackBudget.Entry {
        Arm(long key) {
            super(key, context);
        }

        @Override
        public boolean arm(boolean held) {
            if (held) { // the deferral's hold keeps the event alive through the call
                service.callbacks().launchAfterEvent(context, event, key());
            } else { // armed at once: a hold of its own, against a close on another thread meanwhile
                claim.run(() -> service.callbacks().launchAfterEvent(context, event, key()));
            }
            return true;
        }

        @Override
        public boolean complete() {
            return probe.getAsBoolean();
        }

        @Override
        public boolean probeQueriesContext() {
            return true; // cuEventQuery returns the context's sticky error, if any
        }

        @Override
        public void hold() {
            claim.enter(); // a waker holds the event now; the deferred arm must not outlive it
        }

        @Override
        public void leave() {
            claim.exit();
        }
    }

    /** Withdraws one waker. */
    interface Withdrawal {
        boolean withdraw();
    }
}
