package io.gpusync.opencl;

import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.bindings.opencl.clSetEventCallback$pfn_notify;
import io.gpusync.internal.Housekeeping;
import io.gpusync.internal.ProcessServices;
import io.gpusync.internal.UpcallRegistry;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.SignalListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code clSetEventCallback} registrations, through <em>one</em> upcall stub for the whole process.
 *
 * <p><b>One stub, a key per registration.</b> The stub is allocated once in the global arena; each
 * registration sits in the process's {@link UpcallRegistry} (held by this class's one instance, a
 * {@code ProcessServices} service) under a fresh {@code long} key, passed to the driver as
 * {@code user_data}. The upcall takes the key and completes what it finds. OpenCL cannot unregister a
 * callback, so {@link Registration#cancel()} just removes the key: a late callback finds nothing and
 * returns. Whoever removes the key (upcall, cancel, sweep) owns the completion, so a listener is called at
 * most once.
 *
 * <p><b>Lifetime.</b> A registration holds its own claim on the event's {@link NativeAnchor} (not a
 * {@code clRetainEvent} per registration: our one reference per anchor is enough, and the anchor counts
 * the registrations), dropped when it completes or is cancelled. The driver passes the event to the
 * callback, but we never need it to stay valid after the registration is gone.
 *
 * <p><b>The upcall only hands over</b>: map removal, one status read (below), the listener (which must
 * itself only hand over), the claim drop. It never throws into the driver (an exception escaping an upcall
 * would end the JVM). Releases triggered inside it move to the housekeeping thread ({@link NativeAnchor}).
 *
 * <p><b>PoCL 3.1 quirks this class works around</b> (both in PoCL's
 * {@code pocl_event_updated}): the callback's status argument is the <em>trigger type</em>
 * ({@code CL_COMPLETE}), not the event's status, even when the callback runs synchronously for an event that
 * already failed — so the upcall confirms a non-negative status with one {@code clGetEventInfo} (allowed in
 * a callback: it is not among the calls the spec leaves undefined there, and PoCL calls callbacks with the
 * event unlocked); and a {@code CL_COMPLETE} callback is <em>never</em> called when the event terminates
 * with a negative status. Without help, a registration on a command that fails would never complete. So a
 * <em>sweep</em> on gpusync's housekeeping thread ({@link Housekeeping}) probes the events of pending registrations every
 * {@value #SWEEP_MILLIS_DEFAULT} ms (system property {@code gpusync.opencl.sweepMillis}), one probe per
 * event, and completes those whose status is terminal. It runs only while registrations are pending.
 * On a driver that calls back correctly the sweep only ever sees registrations the callback is about
 * to complete.
 */
final class ClCallbacks {
    static final long SWEEP_MILLIS_DEFAULT = 10;
    private static final long SWEEP_NANOS =
            TimeUnit.MILLISECONDS.toNanos(Math.max(1, Long.getLong("gpusync.opencl.sweepMillis", SWEEP_MILLIS_DEFAULT)));
    private static final System.Logger LOG = System.getLogger(ClCallbacks.class.getName());
    private static final int CL_COMPLETE = OpenCl.CL_COMPLETE();
    private static final MemorySegment STUB =
            clSetEventCallback$pfn_notify.allocate(ClCallbacks::upcall, Arena.global());

    private final UpcallRegistry<Registration> pending = new UpcallRegistry<>("OpenCL event callback");
    private final AtomicBoolean sweepScheduled = new AtomicBoolean();

    private ClCallbacks() {
    }

    /** The process's registrations: one stub, so one registry. */
    private static ClCallbacks process() {
        return ProcessServices.get().service(ClCallbacks.class, ClCallbacks::new);
    }

    /** Registrations whose listener has not run and that are not cancelled. */
    static int pending() {
        return process().pending.pending();
    }

    /**
     * Registers {@code listener} for the completion of {@code event}. The caller holds a wait on
     * {@code anchor} during the call. The listener may run before this returns (PoCL calls back inside
     * {@code clSetEventCallback} when the event is already complete).
     *
     * @throws io.gpusync.SyncException if {@code clSetEventCallback} fails (the listener is not called)
     */
    static Registration register(MemorySegment event, NativeAnchor anchor, SignalListener listener, String what) {
        Registration r = new Registration(event, listener, what);
        r.claim = anchor.claim(r);
        r.key = process().pending.register(r);
        int rc;
        try {
            rc = OpenCl.clSetEventCallback(event, CL_COMPLETE, STUB, MemorySegment.ofAddress(r.key));
        } catch (RuntimeException | Error e) {
            r.cancel();
            throw e;
        }
        if (rc != OpenCl.CL_SUCCESS()) {
            r.cancel();
            throw ClErrors.callFailed(rc, "clSetEventCallback", what);
        }
        scheduleSweep();
        return r;
    }

    private static void upcall(MemorySegment event, int status, MemorySegment userData) {
        process().pending.fire(userData.address(), r -> {
            int confirmed = status;
            try {
                if (status >= 0) { // PoCL 3.1 passes the trigger type here, not the status: confirm it
                    confirmed = Cl.statusInUpcall(r.event, CL_COMPLETE);
                }
            } finally { // whatever happens, the registration we removed is completed
                r.complete(confirmed < 0 ? confirmed : CL_COMPLETE);
            }
        });
    }

    private static void scheduleSweep() {
        if (process().sweepScheduled.compareAndSet(false, true)) {
            Housekeeping.schedule(ClCallbacks::sweep, SWEEP_NANOS, TimeUnit.NANOSECONDS);
        }
    }

    private static void sweep() {
        try {
            Map<NativeAnchor, Integer> statuses = new IdentityHashMap<>();
            process().pending.forEachPending((key, r) -> {
                NativeAnchor anchor = r.claim.anchor();
                Integer status = statuses.get(anchor);
                if (status == null) {
                    try { // the event stays alive while we probe it
                        status = r.claim.call(() -> Cl.statusOr(r.event, Integer.MAX_VALUE));
                    } catch (IllegalStateException completedMeanwhile) {
                        return;
                    }
                    statuses.put(anchor, status);
                }
                if (status <= CL_COMPLETE && process().pending.take(key, r)) {
                    r.complete(status);
                }
            });
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "OpenCL callback sweep failed", t);
        } finally {
            process().sweepScheduled.set(false);
            if (process().pending.pending() > 0) {
                scheduleSweep();
            }
        }
    }

    /** One pending {@code clSetEventCallback} registration. */
    static final class Registration implements CallbackRegistration {
        private final MemorySegment event;
        private final SignalListener listener;
        private final String what;
        private NativeAnchor.Claim claim; // set before the registration is published
        private long key;                 // set before the driver sees it

        private Registration(MemorySegment event, SignalListener listener, String what) {
            this.event = event;
            this.listener = listener;
            this.what = what;
        }

        /** Runs the listener with the terminal {@code status}, then drops the claim. Caller removed the entry. */
        private void complete(int status) {
            try {
                if (status == CL_COMPLETE) {
                    listener.signalled();
                } else {
                    listener.failed(ClErrors.eventFailed(status, what));
                }
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.WARNING, "a SignalListener of " + what + " threw", t);
            } finally {
                claim.close();
            }
        }

        /** Removes the registration if still pending. @return whether this call removed it (no listener call follows) */
        boolean tryCancel() {
            if (process().pending.take(key, this)) {
                claim.close();
                return true;
            }
            return false;
        }

        @Override
        public void cancel() {
            tryCancel();
        }

        @Override
        public String toString() {
            return "OpenCL callback #" + key + " on " + what;
        }
    }
}
