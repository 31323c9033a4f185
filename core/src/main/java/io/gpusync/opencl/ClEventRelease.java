package io.gpusync.opencl;

import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.internal.Housekeeping;

import java.lang.foreign.MemorySegment;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * gpusync's {@code clReleaseEvent} of a command's event, held back while the driver may still fail the command.
 *
 * <p><b>The hazard (PoCL 3.1).</b> When an event in a command's wait list fails (a user event set to a negative
 * status), PoCL fails the command on the failing thread: it sets the command's status, fails the command's own
 * dependents, drops its own reference to the command's event, and then locks that event again. If the application's
 * last reference was released before that drop — while the command was still pending, or just after its status turned
 * negative — the event is freed under PoCL's feet and PoCL aborts the process ({@code PTHREAD ERROR in
 * pocl_update_event_failed()}, SIGABRT). Releasing a completed event is safe, and so is releasing a failed one once
 * PoCL's own reference is gone: PoCL then holds the event's lock until it is done, and a release waits for it.
 *
 * <p><b>What this class does.</b> When gpusync's last hold on an event drops ({@link #releaser}), the event is
 * released at once if it is complete or is a user event (user events are not commands: the driver fails nothing on
 * their behalf). Otherwise the reference is <em>held</em>, and a sweep on gpusync's housekeeping thread probes the
 * held events: a completed one is released; a failed one once two sweeps in a row have seen gpusync's reference as
 * the only one left (the driver's is gone, and the driver has had a sweep's time to lock the event again), or
 * {@value #FAILED_GRACE_MILLIS} ms after its failure was first seen, whichever comes first (a count that stays higher
 * is the application's own references: then gpusync's release is not the last one). A still-pending one stays held.
 * The sweep runs every {@value #SWEEP_MILLIS_MIN} ms while held events change, backing off to once a second while
 * none does; it does not run when nothing is held.
 *
 * <p><b>Threading.</b> {@link #release} runs on the thread that dropped the last hold and makes one or two status
 * queries (no system call on PoCL) and at most one {@code clReleaseEvent}; it never blocks on the GPU. Held releases
 * run on the housekeeping thread. A command that never ends (it waits on a user event that is never set) keeps its
 * event held for the life of the process, which OpenCL leaves undefined anyway.
 */
final class ClEventRelease {
    static final long SWEEP_MILLIS_MIN = 10;
    static final long SWEEP_MILLIS_MAX = 1_000;
    static final long FAILED_GRACE_MILLIS = 1_000;
    private static final long SWEEP_NANOS_MIN = TimeUnit.MILLISECONDS.toNanos(SWEEP_MILLIS_MIN);
    private static final long FAILED_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(FAILED_GRACE_MILLIS);
    private static final System.Logger LOG = System.getLogger(ClEventRelease.class.getName());
    private static final int CL_COMPLETE = OpenCl.CL_COMPLETE();
    private static final ConcurrentLinkedQueue<Held> HELD = new ConcurrentLinkedQueue<>();
    private static final AtomicBoolean SWEEP_SCHEDULED = new AtomicBoolean();
    private static volatile long sweepMillis = SWEEP_MILLIS_MIN;

    private ClEventRelease() {
    }

    /** The release action of an event anchor: {@link #release}. Must not capture a waiter. */
    static Runnable releaser(MemorySegment event, String what) {
        return () -> release(event, what);
    }

    /** Releases gpusync's reference to {@code event} now, or holds it until the driver is done with the command. */
    static void release(MemorySegment event, String what) {
        int status = Cl.statusOr(event, CL_COMPLETE); // a failed query: nothing to wait for, release as before
        if (status == CL_COMPLETE || Cl.infoOr(event, OpenCl.CL_EVENT_COMMAND_TYPE(), 0) == OpenCl.CL_COMMAND_USER()) {
            releaseNow(event, what);
            return;
        }
        HELD.add(new Held(event, what));
        sweepMillis = SWEEP_MILLIS_MIN;
        scheduleSweep();
    }

    /** Whether gpusync's reference to {@code event} is held back (tests observe it). */
    static boolean isHeld(MemorySegment event) {
        return HELD.stream().anyMatch(h -> h.event.address() == event.address());
    }

    private static void scheduleSweep() {
        if (SWEEP_SCHEDULED.compareAndSet(false, true)) {
            Housekeeping.schedule(ClEventRelease::sweep, sweepMillis, TimeUnit.MILLISECONDS);
        }
    }

    private static void sweep() {
        boolean changed = false;
        try {
            long now = System.nanoTime();
            for (Iterator<Held> it = HELD.iterator(); it.hasNext(); ) {
                Held h = it.next();
                if (h.done(now)) {
                    it.remove();
                    releaseNow(h.event, h.what);
                    changed = true;
                } else if (h.changed) {
                    h.changed = false;
                    changed = true;
                }
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "OpenCL held-release sweep failed", t);
        } finally {
            sweepMillis = changed ? SWEEP_MILLIS_MIN : Math.min(SWEEP_MILLIS_MAX, sweepMillis * 2);
            SWEEP_SCHEDULED.set(false);
            if (!HELD.isEmpty()) {
                scheduleSweep();
            }
        }
    }

    private static void releaseNow(MemorySegment event, String what) {
        int rc = OpenCl.clReleaseEvent(event);
        if (rc != OpenCl.CL_SUCCESS()) {
            LOG.log(System.Logger.Level.WARNING, "clReleaseEvent failed on " + what + " ("
                    + ClErrors.name(rc) + " = " + rc + ")");
        }
    }

    /** A held reference; probed by the sweep only. */
    private static final class Held {
        final MemorySegment event;
        final String what;
        long failedSince; // 0 until the failure is first seen
        long aloneSince;  // 0 until gpusync's reference is first seen to be the only one
        boolean changed;

        Held(MemorySegment event, String what) {
            this.event = event;
            this.what = what;
        }

        /** Whether the driver is done with the command: complete, or failed and no longer referenced by the driver. */
        boolean done(long now) {
            int status = Cl.statusOr(event, CL_COMPLETE);
            if (status == CL_COMPLETE) {
                return true;
            }
            if (status > CL_COMPLETE) {
                return false;
            }
            if (failedSince == 0) {
                failedSince = now == 0 ? 1 : now;
                changed = true;
            }
            if (now - failedSince >= FAILED_GRACE_NANOS) {
                return true;
            }
            if (Cl.infoOr(event, OpenCl.CL_EVENT_REFERENCE_COUNT(), 1) > 1) {
                aloneSince = 0;
                return false;
            }
            if (aloneSince == 0) { // the driver's reference is gone; it may not have locked the event again yet
                aloneSince = now == 0 ? 1 : now;
                changed = true;
                return false;
            }
            return now - aloneSince >= SWEEP_NANOS_MIN;
        }
    }
}
