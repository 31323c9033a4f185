package io.gpusync.cuda;

import io.gpusync.SyncException;
import io.gpusync.bindings.cuda.Cuda;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Fails the waits that sit behind gpusync's CUDA callbacks when their context gets a sticky error, as soon as the
 * driver reports it, for engine and blocking waits, {@code FOREVER} as well.
 *
 * <p><b>Reported faults.</b> {@link StreamCallbacks} launches stream callbacks, which the driver calls with the
 * error when their context faults. A callback must not call CUDA, so it only {@linkplain #reported reports} here;
 * this thread then checks every context that has registrations (push, {@code cuStreamQuery(NULL)} — non-blocking,
 * returns the context's sticky error — pop), fails every registration of a faulted context through
 * {@link StreamCallbacks#failContext} with the {@link io.gpusync.DeviceLostException} the check produced, and fails
 * the reporting callback's own registration with its status if it is still pending.
 *
 * <p><b>Watched contexts.</b> A context with registrations but no callback in flight (its waits deferred by
 * {@link StreamCallbackBudget} for want of room) cannot report a fault. While there is one, the thread
 * ({@code gpusync-cuda-fault-watch}, a daemon started on first use) checks it every interval, from
 * {@value #FIRST_INTERVAL_NANOS} ns doubling to {@value #MAX_INTERVAL_NANOS} ns, skipping a check when a driver
 * query in that context succeeded within the interval ({@link #vouch}). Contexts whose callbacks are in flight are
 * checked every {@value #BACKSTOP_INTERVAL_NANOS} ns, a backstop against a driver that would not call them, so the
 * usual case costs one wake-up a second; with no registrations the thread parks without a timeout.
 *
 * <p><b>Threading.</b> Thread-safe. The check never synchronizes with the device ({@code cuStreamQuery} only reads
 * state), so a context blocked behind a host gate is checked without stalling; {@link #reported} and
 * {@link #watch} never block and may be called on driver threads.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
final class CudaFaultWatch {
    static final long FIRST_INTERVAL_NANOS = 1_000_000L;
    /** The longest interval between checks of a context that cannot report its own faults. */
    static final long MAX_INTERVAL_NANOS = 25_000_000L;
    /** The interval between checks of a context whose callbacks report its faults (a backstop). */
    static final long BACKSTOP_INTERVAL_NANOS = 1_000_000_000L;
    private static final System.Logger LOG = System.getLogger(CudaFaultWatch.class.getName());
    private final CudaDriverService service;
    private final AtomicLong checks = new AtomicLong();
    private final OnDemandDaemon thread = new OnDemandDaemon("gpusync-cuda-fault-watch", this::run);
    /** When a driver query in each context last succeeded outside the watch (nanoTime). */
    private final ConcurrentHashMap<Long, Long> vouched = new ConcurrentHashMap<>();
    /** Errors that callbacks reported, not handled yet. */
    private final ConcurrentLinkedQueue<Report> reports = new ConcurrentLinkedQueue<>();
    /** When the watch last checked each context it watches (nanoTime; watch thread only). */
    private final Map<Long, Long> lastChecked = new HashMap<>();
    private volatile boolean rewind;
    /** The thread is parked without a timeout (nothing registered when it last looked). */
    private volatile boolean idle = true;
    /** When the last fault was detected and when its registrations had all been failed (nanoTime; tests). */
    volatile long lastFaultDetectedNanos;
    volatile long lastFaultHandledNanos;
    volatile long lastCheckNanos;

    CudaFaultWatch(CudaDriverService service) {
        this.service = service;
    }

    private record Report(long key, int status) {
    }

    /** A context may have waits that no callback in flight covers: check it closely, starting soon. */
    void watch() {
        rewind = true;
        thread.wake();
    }

    /** A context got its first registration: make sure the thread runs (for the backstop). */
    void registered() {
        if (idle) {
            thread.wake();
        }
    }

    /** A callback ran with {@code status}, not success (driver thread: only queues and unparks). */
    void reported(long key, int status) {
        reports.add(new Report(key, status));
        thread.wake();
    }

    /**
     * A driver query in {@code context} just succeeded (a deferred event's probe, {@link StreamCallbackBudget}): the
     * context had no sticky error then, so the watch need not query it for this interval.
     */
    void vouch(long context) {
        vouched.put(context, System.nanoTime());
    }

    /** Whether a driver query in {@code context} succeeded less than {@code interval} before {@code now}. */
    boolean vouchedWithin(long context, long now, long interval) {
        Long at = vouched.get(context);
        return at != null && now - at < interval;
    }

    /** The watch thread, null before its first wake-up and after it ended (tests). */
    Thread watchThread() {
        return thread.thread();
    }

    /** Context checks made so far (tests: the watch idles while nothing is registered). */
    long checks() {
        return checks.get();
    }

    /** The service closes: the watch thread ends once nothing is registered (a later registration starts another). */
    void close() {
        thread.close();
    }

    /**
     * The watch's loop. Per wake-up it does what its contexts need, never what their waits need: one snapshot of
     * the watched contexts (a copy of a map's key set: one entry per context, however many waits each has), one
     * {@link StreamCallbacks#reportsOwnFaults} lookup per context, and a driver check only for a context that is due.
     */
    private void run() {
        StreamCallbacks callbacks = service.callbacks();
        long interval = FIRST_INTERVAL_NANOS;
        boolean checkedOnce = false;
        while (true) {
            handleReports();
            Set<Long> contexts = callbacks.watchedContexts();
            if (contexts.isEmpty()) {
                idle = true;
                if (reports.isEmpty() && callbacks.watchedContexts().isEmpty()) {
                    if (thread.endIfClosing(() -> reports.isEmpty() && callbacks.watchedContexts().isEmpty())) {
                        return; // idle stays true: the next registration starts a thread again
                    }
                    LockSupport.park(this);
                }
                idle = false;
                lastChecked.clear();
                interval = FIRST_INTERVAL_NANOS;
                continue;
            }
            if (!checkedOnce) {
                // this thread's first contexts are checked at once: the first check pays one-time costs (binding the
                // driver calls, this thread's pop slot) that would otherwise land on a wake-up in the steady state
                checkedOnce = true;
                for (long ctx : contexts) {
                    checkQuietly(ctx);
                }
            }
            if (rewind) {
                rewind = false;
                interval = FIRST_INTERVAL_NANOS;
            }
            boolean close = anyCannotReport(contexts);
            LockSupport.parkNanos(this, close ? interval : BACKSTOP_INTERVAL_NANOS);
            if (close) {
                interval = Math.min(interval * 2, MAX_INTERVAL_NANOS);
            }
            if (!reports.isEmpty() || rewind) {
                continue; // reports first; a rewind restarts the close interval
            }
            checkDue(callbacks.watchedContexts(), interval, System.nanoTime());
        }
    }

    private boolean anyCannotReport(Set<Long> contexts) {
        StreamCallbacks callbacks = service.callbacks();
        for (long ctx : contexts) {
            if (!callbacks.reportsOwnFaults(ctx)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Checks the {@code contexts} that are due at {@code now}: those that cannot report their faults, and the others
     * once a backstop interval; a context in which a driver query succeeded within {@code interval} is skipped.
     * Watch thread only (tests call it on a service whose watch never started).
     *
     * @return how many contexts it checked
     */
    int checkDue(Set<Long> contexts, long interval, long now) {
        StreamCallbacks callbacks = service.callbacks();
        lastChecked.keySet().retainAll(contexts);
        int checked = 0;
        for (long ctx : contexts) {
            Long since = lastChecked.putIfAbsent(ctx, now);
            long last = since == null ? now : since;
            boolean due = !callbacks.reportsOwnFaults(ctx) || now - last >= BACKSTOP_INTERVAL_NANOS - interval;
            Long vouchedAt = vouched.get(ctx);
            if (!due || vouchedAt != null && now - vouchedAt < interval) {
                continue; // reported by its callbacks, or a driver query in it succeeded within this interval
            }
            lastChecked.put(ctx, now);
            checkQuietly(ctx);
            checked++;
        }
        return checked;
    }

    /** Callbacks reported errors: checks every watched context now, then fails what the reports name and is left. */
    private void handleReports() {
        if (reports.isEmpty()) {
            return;
        }
        lastFaultDetectedNanos = System.nanoTime();
        List<Report> batch = new ArrayList<>();
        for (Report r; (r = reports.poll()) != null; ) {
            batch.add(r);
        }
        for (long ctx : service.callbacks().watchedContexts()) { // one check per context, not per wait
            checkQuietly(ctx);
        }
        for (Report r : batch) {
            if (service.callbacks().registered(r.key())) { // its context's check did not fail it (not sticky, or gone)
                service.callbacks().failKey(r.key(), CudaResults.exception(r.status(), "a CUDA stream callback reported"));
            }
        }
        lastFaultHandledNanos = System.nanoTime();
    }

    private void checkQuietly(long ctx) {
        try {
            check(ctx);
        } catch (RuntimeException | Error e) { // never let the watch die; a failed check repeats when next due
            LOG.log(System.Logger.Level.DEBUG, "CUDA fault watch: checking context 0x" + Long.toHexString(ctx)
                    + " failed", e);
        }
    }

    /** Checks one context; on a fatal result fails its registrations. */
    void check(long ctx) {
        checks.incrementAndGet();
        long t0 = System.nanoTime();
        java.lang.foreign.MemorySegment context = java.lang.foreign.MemorySegment.ofAddress(ctx);
        SyncException fault = null;
        service.ensureDriver();
        try (CudaDriver.Pushed ignored = CudaDriver.Pushed.pushHeldLoaded(context, "CUDA fault watch")) {
            int r = Cuda.cuStreamQuery(java.lang.foreign.MemorySegment.NULL);
            if (CudaResults.isFatal(r)) {
                fault = CudaResults.exception(r, "CUDA fault watch: cuStreamQuery on context 0x" + Long.toHexString(ctx));
            }
        } catch (SyncException e) {
            if (e.kind() == io.gpusync.ErrorKind.FATAL) {
                fault = e;
            } else {
                throw e;
            }
        }
        lastCheckNanos = System.nanoTime() - t0;
        if (fault != null) {
            lastFaultDetectedNanos = System.nanoTime();
            int n = service.callbacks().failContext(ctx, fault);
            lastFaultHandledNanos = System.nanoTime();
            LOG.log(System.Logger.Level.DEBUG, "CUDA fault watch: context 0x" + Long.toHexString(ctx)
                    + " failed (" + fault.getMessage() + "); " + n + " wait(s) failed");
        }
    }
}
