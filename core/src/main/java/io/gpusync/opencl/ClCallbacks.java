package io.gpusync.opencl;

import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.bindings.opencl.clSetEventCallback$pfn_notify;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.NativeAnchor;
import io.gpusync.spi.SignalListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code clSetEventCallback} registrations, through <em>one</em> upcall stub for the whole process.
 *
 * <p><b>One stub, a key per registration.</b> The stub is allocated once in the global arena; each
 * registration gets a fresh {@code long} id, passed to the driver as {@code user_data}, and sits in a
 * concurrent map under that id. The upcall removes the id from the map and completes what it finds. OpenCL
 * cannot unregister a callback, so {@link Registration#cancel()} just removes the map entry: a late
 * callback finds nothing and returns. Whoever removes the entry (upcall, cancel, sweep) owns the
 * completion, so a listener is called at most once.
 *
 * <p><b>Lifetime.</b> A registration holds its own claim on the event's {@link NativeAnchor} (not a
 * {@code clRetainEvent} per registration: our one reference per anchor is enough, and the anchor counts
 * the registrations), dropped when it completes or is cancelled. The driver passes the event to the
 * callback, but we never need it to stay valid after the registration is gone.
 *
 * <p><b>The upcall only hands over</b>: map removal, one status read (below), the listener (which must
 * itself only hand over), the claim drop. It never throws into the driver (an exception escaping an upcall
 * would end the JVM). Releases triggered inside it are deferred ({@link Cl#releaser}).
 *
 * <p><b>PoCL 3.1 quirks this class works around</b> (both observed here, both in PoCL's
 * {@code pocl_event_updated}): the callback's status argument is the <em>trigger type</em>
 * ({@code CL_COMPLETE}), not the event's status, even when the callback runs synchronously for an event that
 * already failed — so the upcall confirms a non-negative status with one {@code clGetEventInfo} (allowed in
 * a callback: it is not among the calls the spec leaves undefined there, and PoCL calls callbacks with the
 * event unlocked); and a {@code CL_COMPLETE} callback is <em>never</em> called when the event terminates
 * with a negative status. Without help, a registration on a command that fails would never complete. So a
 * <em>sweep</em> on the housekeeping thread probes the events of pending registrations every
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
    private static final ScopedValue<Boolean> IN_UPCALL = ScopedValue.newInstance();
    private static final ConcurrentHashMap<Long, Registration> PENDING = new ConcurrentHashMap<>();
    private static final AtomicLong IDS = new AtomicLong();
    private static final AtomicBoolean SWEEP_SCHEDULED = new AtomicBoolean();
    private static final int CL_COMPLETE = OpenCl.CL_COMPLETE();
    private static final MemorySegment STUB =
            clSetEventCallback$pfn_notify.allocate(ClCallbacks::upcall, Arena.global());

    private ClCallbacks() {
    }

    /** Whether the current thread is inside our event callback. */
    static boolean inUpcall() {
        return IN_UPCALL.isBound();
    }

    /** Registrations whose listener has not run and that are not cancelled. */
    static int pending() {
        return PENDING.size();
    }

    /** The daemon thread that sweeps and runs deferred releases; it ends when idle for a second. */
    static ScheduledThreadPoolExecutor housekeeper() {
        return Housekeeper.EXECUTOR;
    }

    private static final class Housekeeper {
        static final ScheduledThreadPoolExecutor EXECUTOR = create();

        private static ScheduledThreadPoolExecutor create() {
            ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
                Thread t = new Thread(runnable, "gpusync-opencl-housekeeper");
                t.setDaemon(true);
                return t;
            });
            executor.setKeepAliveTime(1, TimeUnit.SECONDS);
            executor.allowCoreThreadTimeOut(true);
            executor.setRemoveOnCancelPolicy(true);
            return executor;
        }
    }

    /**
     * Registers {@code listener} for the completion of {@code event}. The caller holds a wait on
     * {@code anchor} during the call. The listener may run before this returns (PoCL calls back inside
     * {@code clSetEventCallback} when the event is already complete).
     *
     * @throws io.gpusync.SyncException if {@code clSetEventCallback} fails (the listener is not called)
     */
    static Registration register(MemorySegment event, NativeAnchor anchor, SignalListener listener, String what) {
        Registration r = new Registration(IDS.incrementAndGet(), event, listener, what);
        r.claim = anchor.claim(r);
        PENDING.put(r.id, r);
        int rc;
        try {
            rc = OpenCl.clSetEventCallback(event, CL_COMPLETE, STUB, MemorySegment.ofAddress(r.id));
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
        try {
            Registration r = PENDING.remove(userData.address());
            if (r == null) {
                return; // cancelled, or already completed by a sweep
            }
            ScopedValue.where(IN_UPCALL, Boolean.TRUE).run(() -> {
                int confirmed = status;
                try {
                    if (status >= 0) { // PoCL 3.1 passes the trigger type here, not the status: confirm it
                        confirmed = Cl.statusOr(r.event, CL_COMPLETE);
                    }
                } finally { // whatever happens, the registration we removed is completed
                    r.complete(confirmed < 0 ? confirmed : CL_COMPLETE);
                }
            });
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.ERROR, "OpenCL event callback failed", t);
            } catch (Throwable ignored) {
                // nothing may escape into the driver
            }
        }
    }

    private static void scheduleSweep() {
        if (SWEEP_SCHEDULED.compareAndSet(false, true)) {
            housekeeper().schedule(ClCallbacks::sweep, SWEEP_NANOS, TimeUnit.NANOSECONDS);
        }
    }

    private static void sweep() {
        try {
            Map<NativeAnchor, Integer> statuses = new IdentityHashMap<>();
            for (Registration r : PENDING.values()) {
                NativeAnchor anchor = r.claim.anchor();
                Integer status = statuses.get(anchor);
                if (status == null) {
                    try {
                        r.claim.enter(); // the event stays alive while we probe it
                    } catch (IllegalStateException completedMeanwhile) {
                        continue;
                    }
                    try {
                        status = Cl.statusOr(r.event, Integer.MAX_VALUE);
                    } finally {
                        r.claim.exit();
                    }
                    statuses.put(anchor, status);
                }
                if (status <= CL_COMPLETE && PENDING.remove(r.id, r)) {
                    r.complete(status);
                }
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "OpenCL callback sweep failed", t);
        } finally {
            SWEEP_SCHEDULED.set(false);
            if (!PENDING.isEmpty()) {
                scheduleSweep();
            }
        }
    }

    /** One pending {@code clSetEventCallback} registration. */
    static final class Registration implements CallbackRegistration {
        private final long id;
        private final MemorySegment event;
        private final SignalListener listener;
        private final String what;
        private NativeAnchor.Claim claim; // set before the registration is published

        private Registration(long id, MemorySegment event, SignalListener listener, String what) {
            this.id = id;
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
            if (PENDING.remove(id, this)) {
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
            return "OpenCL callback #" + id + " on " + what;
        }
    }
}
