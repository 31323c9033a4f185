package io.gpusync.opencl;

import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.internal.Housekeeping;
import io.gpusync.internal.ProcessServices;
import io.gpusync.internal.UpcallRegistry;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntSupplier;

/**
 * gpusync's references to {@code cl_event}s, and the rule for its last {@code clReleaseEvent} of one: never while the
 * driver may still touch the event.
 *
 * <p><b>The hazards (PoCL 3.1).</b> An event whose count reaches zero is freed at once; nothing else keeps it alive, in
 * particular not its place in the dependents list of each event it waits on. When an event terminates, PoCL walks that
 * list and locks each dependent ({@code pocl_broadcast}, {@code pocl_lock_events_inorder}); a dependent whose
 * dependency failed is failed from inside that walk, and PoCL drops its own reference to it and then locks it again
 * ({@code pocl_update_event_failed}). A command that waits on several events — its wait list and, on an in-order
 * queue, the command enqueued before it — fails as soon as one of them fails while the others still list it. If its
 * last reference goes then, the next of them to terminate locks freed memory and PoCL aborts the process
 * ({@code PTHREAD ERROR in pocl_lock_events_inorder()} or {@code in pocl_update_event_failed()}).
 *
 * <p><b>The rule.</b> gpusync counts its own references to each event ({@link Ref}). Dropping one of several is a
 * plain {@code clReleaseEvent}. The last one is released at once if the event is a user event (it waits on nothing,
 * so no list holds it) or complete (it ran, so every event it waited on had let go of it, and PoCL keeps a reference of
 * its own until it is done with it). A pending command's last reference is <em>held</em>; so is a failed command's
 * until every event it waits on is <em>settled</em>: terminated, referenced by gpusync alone and with no
 * status-setting call of gpusync's in flight. That holds by construction: PoCL drops its own reference to a command
 * only after it has walked the command's dependents, and whoever sets a user event's status holds a reference through
 * the call. gpusync knows what a command waits on when it enqueued the command itself
 * ({@link OpenClQueue}: the wait list and the command before it on the queue, see {@link #waitsOn}); for an event
 * handed to it ({@link OpenClEvents#adopt}, {@link OpenClEvents#borrow}) it does not,
 * so a failed command's last reference is then held for the life of the process.
 *
 * <p><b>State.</b> The table of references lives in this class's one instance, a {@code ProcessServices} service (the
 * driver, and so its events, are one per process); the static methods are the API.
 *
 * <p><b>Threading.</b> A sweep on gpusync's housekeeping thread probes held events and commands whose wait lists are
 * still kept, every {@value #SWEEP_MILLIS_MIN} ms while something changes, backing off to once a second; it does not
 * run when nothing is watched. A drop inside a driver upcall moves to the housekeeping thread (PoCL calls back with
 * events locked and walks their lists around the call). Each {@link Ref} is a monitor, never held while another is
 * taken: a thread that PoCL calls back while it holds an event locked then blocks on a monitor only where its own
 * driver call on that event would block anyway.
 */
final class ClEventRelease {
    static final long SWEEP_MILLIS_MIN = 10;
    static final long SWEEP_MILLIS_MAX = 1_000;
    private static final System.Logger LOG = System.getLogger(ClEventRelease.class.getName());
    private static final int CL_COMPLETE = OpenCl.CL_COMPLETE();
    private static final int CL_QUEUED = OpenCl.CL_QUEUED();
    /** The longest a failing status change waits for the other dependencies of its commands to settle. */
    private static final long QUIET_NANOS = 100_000_000;
    /** The monitor that status changes through {@link #setStatus} take, one at a time per process. */
    private static final Object STATUS_CHANGES = new Object();

    /** gpusync's references, by event address: one table per process, as the driver is one per process. */
    private final ConcurrentHashMap<Long, Ref> refs = new ConcurrentHashMap<>();
    /** Held references, and commands that still keep the events they wait on. */
    private final Set<Ref> watched = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean sweepScheduled = new AtomicBoolean();
    /** Enqueues through gpusync ({@link #enqueueing}) share it; a failing status change takes it alone. */
    private final ReentrantReadWriteLock failures = new ReentrantReadWriteLock();
    private volatile long sweepMillis = SWEEP_MILLIS_MIN;

    private ClEventRelease() {
    }

    private static ClEventRelease process() {
        return ProcessServices.get().service(ClEventRelease.class, ClEventRelease::new);
    }

    /** gpusync's references to one event, while it holds any. */
    static final class Ref {
        final MemorySegment event;
        final String what;
        final boolean user;
        private int refs;          // gpusync's references
        private int calls;         // gpusync's status-setting calls in flight
        private List<Ref> waitsOn; // what the command waits on, one reference each; null: unknown
        private boolean held;      // the last reference waits for the sweep
        private boolean pinned;    // the sweep is probing what it waits on: not released meanwhile
        private boolean gone;      // released; no longer in the table

        private Ref(MemorySegment event, String what, boolean user) {
            this.event = event;
            this.what = what;
            this.user = user;
        }

        @Override
        public String toString() {
            return what;
        }
    }

    /** gpusync takes over a reference the caller holds to {@code event} (a valid handle). */
    static Ref adopt(MemorySegment event, String what) {
        return take(event, what, false);
    }

    /**
     * gpusync takes a reference of its own to {@code event} ({@code clRetainEvent}).
     *
     * @throws io.gpusync.SyncException if the driver refuses it (the caller keeps its reference)
     */
    static Ref retain(MemorySegment event, String what) {
        return take(event, what, true);
    }

    private static Ref take(MemorySegment event, String what, boolean retain) {
        boolean user = Cl.infoOr(event, OpenCl.CL_EVENT_COMMAND_TYPE(), 0) == OpenCl.CL_COMMAND_USER();
        while (true) {
            Ref r = process().refs.computeIfAbsent(event.address(), a -> new Ref(MemorySegment.ofAddress(a), what, user));
            synchronized (r) {
                if (r.gone) {
                    continue;
                }
                if (r.held) { // gpusync's held reference stops being its last: it serves again
                    r.held = false;
                    if (!retain) {
                        releaseNative(r);
                    }
                    return r;
                }
                if (retain) {
                    try {
                        Cl.retainEvent(r.event, what);
                    } catch (RuntimeException | Error e) {
                        if (r.refs == 0) {
                            r.gone = true;
                            process().refs.remove(r.event.address(), r);
                        }
                        throw e;
                    }
                }
                r.refs++;
                return r;
            }
        }
    }

    /**
     * A reference of gpusync's own to {@code r}'s event if gpusync still holds one (its last one, held, serves), or
     * {@code null} once gpusync has released it: the event then was complete, or failed and done.
     */
    static Ref retainIfHeld(Ref r) {
        synchronized (r) {
            if (r.gone) {
                return null;
            }
            if (r.held) {
                r.held = false;
            } else {
                Cl.retainEvent(r.event, r.what);
                r.refs++;
            }
            return r;
        }
    }

    /**
     * Records what the command of {@code command} waits on: {@code waitsOn} are references taken for the purpose
     * ({@link #retain}), now owned by {@code command}, and released once it no longer needs them. Called once, by
     * whoever enqueued the command, before any of its references can drop.
     */
    static void waitsOn(Ref command, List<Ref> waitsOn) {
        synchronized (command) {
            if (command.waitsOn != null) {
                throw new IllegalStateException(command + ": wait list already recorded");
            }
            command.waitsOn = List.copyOf(waitsOn);
        }
        if (!waitsOn.isEmpty()) {
            watch(command);
        }
    }

    /** Runs {@code call}, a status-setting call on {@code r}'s event, counted as in flight. */
    static int call(Ref r, IntSupplier call) {
        synchronized (r) {
            r.calls++;
        }
        try {
            return call.getAsInt();
        } finally {
            synchronized (r) {
                r.calls--;
            }
        }
    }

    /**
     * {@code clSetUserEventStatus(event, status)} with no other status change made through here in flight, and
     * counted as one of gpusync's status-setting calls on the event while gpusync holds references to it. PoCL 3.1 can
     * both fail and run a command whose dependencies end at once on two threads, one failing, and then uses the freed
     * command; one change at a time closes that window. Reentrant: listeners running inside the call may end other
     * user events.
     */
    static int setStatus(MemorySegment event, int status) {
        // a failure takes the enqueues' lock first, never while holding STATUS_CHANGES: a listener running inside an
        // enqueue that ends a user event then finds STATUS_CHANGES free
        return status < CL_COMPLETE ? failing(() -> change(event, status)) : change(event, status);
    }

    private static int change(MemorySegment event, int status) {
        synchronized (STATUS_CHANGES) {
            Ref r = process().refs.get(event.address());
            IntSupplier set = () -> OpenCl.clSetUserEventStatus(event, status);
            if (r == null) {
                return set.getAsInt();
            }
            if (status < CL_COMPLETE && !UpcallRegistry.inUpcall()) { // inside a callback PoCL holds events locked
                awaitQuietDependents(r);
            }
            return call(r, set);
        }
    }

    /**
     * A failing status change, with no enqueue through gpusync in flight ({@link #enqueueing}). PoCL 3.1 fails the
     * commands behind a failing user event, and on an in-order queue every later one, walking them on the calling thread;
     * a command enqueued on that queue meanwhile is linked to one being failed, and both threads then use a freed
     * command (SIGSEGV in {@code clSetUserEventStatus} and in the enqueue). Not taken on a thread inside an enqueue (a
     * listener a driver runs there: it would wait for itself), nor inside a driver's callback (the driver may hold the
     * locks an enqueue in flight waits for); such a failure is not excluded. Held through the wait for quiet dependents
     * too, so an enqueue may wait up to {@link #QUIET_NANOS} behind a failure.
     */
    private static int failing(IntSupplier change) {
        ReentrantReadWriteLock failures = process().failures;
        if (failures.getReadHoldCount() > 0 || UpcallRegistry.inUpcall()) {
            return change.getAsInt();
        }
        failures.writeLock().lock();
        try {
            return change.getAsInt();
        } finally {
            failures.writeLock().unlock();
        }
    }

    /**
     * Runs {@code enqueue}, a {@code clEnqueue…} or {@code clFlush} of gpusync's ({@link OpenClQueue}), with no failing
     * status change in flight ({@link #failing}); enqueues run alongside each other.
     */
    static int enqueueing(IntSupplier enqueue) {
        ReentrantReadWriteLock failures = process().failures;
        failures.readLock().lock();
        try {
            return enqueue.getAsInt();
        } finally {
            failures.readLock().unlock();
        }
    }

    /**
     * Before {@code user} fails: waits, for at most {@link #QUIET_NANOS}, until no other dependency of a command that
     * waits on it can end during the failure. PoCL 3.1's failure of such a command unlocks it half-way; a dependency that
     * ends meanwhile on PoCL's own thread (on an in-order queue, the command before it, completing) still sees it queued
     * with nothing left to wait for and runs it as well: PoCL then asserts, uses the freed command, or never ends it.
     * Only commands gpusync enqueued ({@link OpenClQueue}) have known dependencies. The wait spins, then parks in
     * short slices; a marker's predecessor settles within microseconds, a running kernel may hold it to the bound.
     */
    private static void awaitQuietDependents(Ref user) {
        List<Ref> others = new ArrayList<>();
        for (Ref command : process().watched) {
            List<Ref> waitsOn;
            synchronized (command) {
                waitsOn = command.gone ? null : command.waitsOn;
            }
            if (waitsOn != null && waitsOn.contains(user) && stillPending(command)) {
                for (Ref d : waitsOn) {
                    Ref kept = d == user ? null : retainIfHeld(d); // alive while probed, whatever the sweep does
                    if (kept != null) {
                        others.add(kept);
                    }
                }
            }
        }
        try {
            long deadline = System.nanoTime() + QUIET_NANOS;
            for (int spins = 0; !others.stream().allMatch(ClEventRelease::cannotEndNow)
                    && System.nanoTime() - deadline < 0; spins++) {
                if (spins < 1_000) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(20_000);
                }
            }
        } finally {
            others.forEach(ClEventRelease::drop);
        }
    }

    /**
     * Whether {@code d} cannot end (or finish ending) during a status change made now: a user event (their status changes
     * come through here, one at a time), a command PoCL is done with ({@link #settled}), or a command still queued
     * behind a user event that has not ended. Anything else may end at any moment: a command running or about to run,
     * one whose end PoCL is still broadcasting, one whose dependencies gpusync does not know.
     */
    private static boolean cannotEndNow(Ref d) {
        if (d.user) {
            return true;
        }
        int status = Cl.statusOr(d.event, CL_COMPLETE);
        if (status <= CL_COMPLETE) {
            return settled(d);
        }
        if (status != CL_QUEUED) {
            return false;
        }
        List<Ref> waitsOn;
        synchronized (d) {
            waitsOn = d.waitsOn;
        }
        return waitsOn != null && waitsOn.stream().anyMatch(x -> x.user && stillPending(x));
    }

    /**
     * Whether {@code d}'s event has not ended. Probed under {@code d}'s monitor and only while gpusync still holds a
     * reference ({@code !gone}): the caller's snapshot of a wait list keeps no reference, and a sweep may release an
     * entry meanwhile, freeing the event. One gpusync no longer holds counts as ended: nothing of gpusync's waits on it.
     */
    private static boolean stillPending(Ref d) {
        synchronized (d) {
            return !d.gone && Cl.statusOr(d.event, CL_COMPLETE) > CL_COMPLETE;
        }
    }

    /** The release action of an anchor over one of gpusync's references: {@link #drop}. Must not capture a waiter. */
    static Runnable releaser(Ref r) {
        return () -> drop(r);
    }

    /**
     * Drops one of gpusync's references to {@code r}'s event: at once, or, for the last one of a command the driver may
     * still touch, on a later sweep.
     */
    static void drop(Ref r) {
        if (UpcallRegistry.inUpcall()) { // PoCL may be walking lists that hold this event, or hold it locked
            Housekeeping.execute(() -> drop(r));
            return;
        }
        List<Ref> released;
        synchronized (r) {
            if (r.gone || r.held || r.refs < 1) {
                LOG.log(System.Logger.Level.WARNING, "unbalanced release of " + r.what);
                return;
            }
            if (r.refs > 1) {
                r.refs--;
                releaseNative(r);
                return;
            }
            if (r.pinned || !releasableNow(r)) {
                r.held = true;
                watch(r);
                return;
            }
            released = releaseLast(r);
        }
        released.forEach(ClEventRelease::drop);
    }

    /** Whether gpusync's reference to {@code event} is held back (tests observe it). */
    static boolean isHeld(MemorySegment event) {
        Ref r = process().refs.get(event.address());
        if (r == null) {
            return false;
        }
        synchronized (r) {
            return r.held && !r.gone;
        }
    }

    /** Events gpusync holds references to (tests observe it). */
    static int tracked() {
        return process().refs.size();
    }

    /** gpusync's references to {@code event} (tests observe it). */
    static int references(MemorySegment event) {
        Ref r = process().refs.get(event.address());
        if (r == null) {
            return 0;
        }
        synchronized (r) {
            return r.gone ? 0 : r.refs;
        }
    }

    /**
     * Whether the last reference may go without looking at what the command waits on: a user event, a complete
     * command, or a failed one whose wait list has been found settled (or was empty). Caller holds {@code r}.
     */
    private static boolean releasableNow(Ref r) {
        if (r.user) {
            return true;
        }
        int status = Cl.statusOr(r.event, CL_COMPLETE); // a failed query: nothing left to wait for
        return status == CL_COMPLETE || status < CL_COMPLETE && r.waitsOn != null && r.waitsOn.isEmpty();
    }

    /** Terminated, referenced by gpusync alone, no status-setting call of gpusync's in flight. */
    private static boolean settled(Ref d) {
        synchronized (d) {
            if (d.gone) {
                return true; // released: it had ended, and gpusync holds it no more (its event is not to be touched)
            }
            if (d.calls > 0 || Cl.statusOr(d.event, Integer.MAX_VALUE) > CL_COMPLETE) {
                return false;
            }
            return Cl.infoOr(d.event, OpenCl.CL_EVENT_REFERENCE_COUNT(), Integer.MAX_VALUE) <= d.refs;
        }
    }

    /** Releases the last reference; returns the wait-list references to drop next. Caller holds {@code r}. */
    private static List<Ref> releaseLast(Ref r) {
        List<Ref> waitsOn = r.waitsOn == null ? List.of() : r.waitsOn;
        r.waitsOn = List.of();
        r.refs = 0;
        r.held = false;
        r.gone = true;
        releaseNative(r); // before it leaves the table: a look-up meanwhile waits on r's monitor, then sees it gone
        process().refs.remove(r.event.address(), r);
        process().watched.remove(r);
        return waitsOn;
    }

    private static void releaseNative(Ref r) {
        int rc = OpenCl.clReleaseEvent(r.event);
        if (rc != OpenCl.CL_SUCCESS()) {
            LOG.log(System.Logger.Level.WARNING, "clReleaseEvent failed on " + r.what + " ("
                    + ClErrors.name(rc) + " = " + rc + ")");
        }
    }

    private static void watch(Ref r) {
        ClEventRelease p = process();
        p.watched.add(r);
        p.sweepMillis = SWEEP_MILLIS_MIN;
        if (p.sweepScheduled.compareAndSet(false, true)) {
            Housekeeping.schedule(ClEventRelease::sweep, p.sweepMillis, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Probes each watched command without holding its monitor (pinned, so neither it nor what it waits on is released
     * meanwhile): one that is complete, or failed with everything it waits on settled, drops its wait list and, if its
     * last reference is held, that too.
     */
    private static void sweep() {
        ClEventRelease p = process();
        boolean changed = false;
        try {
            for (Ref r : p.watched) {
                List<Ref> waitsOn;
                int status;
                synchronized (r) {
                    if (r.gone) {
                        process().watched.remove(r);
                        continue;
                    }
                    r.pinned = true;
                    waitsOn = r.waitsOn;
                    status = r.user ? CL_COMPLETE : Cl.statusOr(r.event, CL_COMPLETE);
                }
                boolean done = false;
                try {
                    done = status == CL_COMPLETE || status < CL_COMPLETE && waitsOn != null
                            && waitsOn.stream().allMatch(ClEventRelease::settled);
                } finally {
                    List<Ref> released = new ArrayList<>();
                    synchronized (r) {
                        r.pinned = false;
                        if (done && waitsOn != null && !waitsOn.isEmpty()) {
                            released.addAll(waitsOn); // needed no more
                            r.waitsOn = List.of();
                            changed = true;
                        }
                        if (r.held && done) {
                            released.addAll(releaseLast(r));
                            changed = true;
                        } else if (!r.held && (r.waitsOn == null || r.waitsOn.isEmpty())) {
                            process().watched.remove(r);
                        }
                    }
                    released.forEach(ClEventRelease::drop);
                }
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "OpenCL release sweep failed", t);
        } finally {
            p.sweepMillis = changed ? SWEEP_MILLIS_MIN : Math.min(SWEEP_MILLIS_MAX, p.sweepMillis * 2);
            p.sweepScheduled.set(false);
            if (!p.watched.isEmpty() && p.sweepScheduled.compareAndSet(false, true)) {
                Housekeeping.schedule(ClEventRelease::sweep, p.sweepMillis, TimeUnit.MILLISECONDS);
            }
        }
    }
}
