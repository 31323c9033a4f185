package io.gpusync.cuda;

import io.gpusync.SyncException;
import io.gpusync.bindings.cuda.Cuda;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Fails the waits that sit behind gpusync's CUDA callbacks when their context gets a sticky error, as soon as the
 * driver reports it, for engine and blocking waits, {@code FOREVER} as well.
 *
 * <p><b>Reported faults.</b> {@link HostFunctions} launches stream callbacks, which the driver calls with the
 * error when their context faults (a {@code cuLaunchHostFunc} host function would never be called, and CUDA.jl
 * re-queries on a timer for that reason). Measured on the H200: ≈ 0.1 ms after a trap in a bare probe with five
 * callbacks; 7–16 ms after it with 165 waits, 32 callbacks and dozens of streams in flight, while the driver's
 * own queries took up to 4.7 ms — the fault-to-error latency is now the driver's (p99 16.5 ms over 495 waits of
 * three faults). A callback must not call CUDA, so it
 * only {@linkplain #reported reports} here; this thread then checks every context that has registrations
 * (push, {@code cuStreamQuery(NULL)} — non-blocking, returns the context's sticky error — pop), fails every
 * registration of a faulted context through {@link HostFunctions#failContext} with the
 * {@link io.gpusync.DeviceLostException} the check produced, and fails the reporting callback's own registration
 * with its status if it is still pending.
 *
 * <p><b>Watched contexts.</b> A context with registrations but no callback in flight cannot report a fault: its
 * waits are deferred by {@link HostFunctionBudget} for want of room (another context's callbacks hold it). While
 * there is such a context, the thread ({@code gpusync-cuda-fault-watch}, a daemon started on first use) checks it
 * every interval, starting at {@value #FIRST_INTERVAL_NANOS} ns and doubling up to {@value #MAX_INTERVAL_NANOS} ns
 * (a fault is then failed within ≈ 25 ms); a check is skipped when a driver query in that context succeeded within
 * the interval ({@link #vouch}). Contexts whose callbacks are in flight are checked every
 * {@value #BACKSTOP_INTERVAL_NANOS} ns, a backstop against a driver that would not call them; with no registrations
 * at all the thread parks without a timeout.
 *
 * <p><b>Cost.</b> While nothing faults and every context with waits has a callback in flight — the usual case:
 * only waits beyond {@link HostFunctionBudget#capacity()} in a context with none armed need the close watch — the
 * watch wakes once a second and makes one check per context. (With a timer check of every context at 25 ms, its
 * cost on the H200's idle PVM guest was 0.31–0.46 % of a core, most of it leaving and re-entering idle:
 * {@code benchmarks/results/timer-wake-cost.md}.)
 *
 * <p>The check never synchronizes with the device ({@code cuStreamQuery} only reads state), so a context blocked
 * behind a host gate is checked without stalling. Thread-safe; {@link #reported} and {@link #watch} never block and
 * may be called on driver threads.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
final class CudaFaultWatch {
    static final long FIRST_INTERVAL_NANOS = 1_000_000L;
    /** The longest interval between checks of a context that cannot report its own faults. */
    static final long MAX_INTERVAL_NANOS = 25_000_000L;
    /** The interval between checks of a context whose callbacks report its faults (a backstop). */
    static final long BACKSTOP_INTERVAL_NANOS = 1_000_000_000L;
    private static final System.Logger LOG = System.getLogger(CudaFaultWatch.class.getName());
    private static final AtomicLong CHECKS = new AtomicLong();
    private static final OnDemandDaemon THREAD = new OnDemandDaemon("gpusync-cuda-fault-watch", CudaFaultWatch::run);
    /** When a driver query in each context last succeeded outside the watch (nanoTime). */
    private static final ConcurrentHashMap<Long, Long> VOUCHED = new ConcurrentHashMap<>();
    /** Errors that callbacks reported, not handled yet. */
    private static final ConcurrentLinkedQueue<Report> REPORTS = new ConcurrentLinkedQueue<>();
    /** When the watch last checked each context it watches (nanoTime; watch thread only). */
    private static final Map<Long, Long> LAST_CHECKED = new HashMap<>();
    private static volatile boolean rewind;
    /** The thread is parked without a timeout (nothing registered when it last looked). */
    private static volatile boolean idle = true;
    /** When the last fault was detected and when its registrations had all been failed (nanoTime; tests). */
    static volatile long lastFaultDetectedNanos;
    static volatile long lastFaultHandledNanos;
    static volatile long lastCheckNanos;

    private CudaFaultWatch() {
    }

    private record Report(long key, int status) {
    }

    /** A context may have waits that no callback in flight covers: check it closely, starting soon. */
    static void watch() {
        rewind = true;
        THREAD.wake();
    }

    /** A context got its first registration: make sure the thread runs (for the backstop). */
    static void registered() {
        if (idle) {
            THREAD.wake();
        }
    }

    /** A callback ran with {@code status}, not success (driver thread: only queues and unparks). */
    static void reported(long key, int status) {
        REPORTS.add(new Report(key, status));
        THREAD.wake();
    }

    /**
     * A driver query in {@code context} just succeeded (a deferred event's probe, {@link HostFunctionBudget}): the
     * context had no sticky error then, so the watch need not query it for this interval.
     */
    static void vouch(long context) {
        VOUCHED.put(context, System.nanoTime());
    }

    /** Context checks made so far (tests: the watch idles while nothing is registered). */
    static long checks() {
        return CHECKS.get();
    }

    private static void run() {
        long interval = FIRST_INTERVAL_NANOS;
        while (true) {
            handleReports();
            if (HostFunctions.watchedContexts().isEmpty()) {
                idle = true;
                if (REPORTS.isEmpty() && HostFunctions.watchedContexts().isEmpty()) {
                    LockSupport.park(CudaFaultWatch.class);
                }
                idle = false;
                LAST_CHECKED.clear();
                interval = FIRST_INTERVAL_NANOS;
                continue;
            }
            if (rewind) {
                rewind = false;
                interval = FIRST_INTERVAL_NANOS;
            }
            boolean close = HostFunctions.watchedContexts().stream().anyMatch(c -> !HostFunctions.reportsOwnFaults(c));
            LockSupport.parkNanos(CudaFaultWatch.class, close ? interval : BACKSTOP_INTERVAL_NANOS);
            if (close) {
                interval = Math.min(interval * 2, MAX_INTERVAL_NANOS);
            }
            if (!REPORTS.isEmpty() || rewind) {
                continue; // reports first; a rewind restarts the close interval
            }
            checkDue(interval);
        }
    }

    /** Checks the contexts that are due: those that cannot report their faults, and the others once a backstop interval. */
    private static void checkDue(long interval) {
        long now = System.nanoTime();
        var contexts = HostFunctions.watchedContexts();
        LAST_CHECKED.keySet().retainAll(contexts);
        for (long ctx : contexts) {
            long last = LAST_CHECKED.computeIfAbsent(ctx, k -> now);
            boolean due = !HostFunctions.reportsOwnFaults(ctx) || now - last >= BACKSTOP_INTERVAL_NANOS - interval;
            Long vouched = VOUCHED.get(ctx);
            if (!due || vouched != null && now - vouched < interval) {
                continue; // reported by its callbacks, or a driver query in it succeeded within this interval
            }
            LAST_CHECKED.put(ctx, now);
            checkQuietly(ctx);
        }
    }

    /** Callbacks reported errors: checks every watched context now, then fails what the reports name and is left. */
    private static void handleReports() {
        if (REPORTS.isEmpty()) {
            return;
        }
        lastFaultDetectedNanos = System.nanoTime();
        List<Report> reports = new ArrayList<>();
        for (Report r; (r = REPORTS.poll()) != null; ) {
            reports.add(r);
        }
        for (long ctx : HostFunctions.watchedContexts()) {
            checkQuietly(ctx);
        }
        for (Report r : reports) {
            if (HostFunctions.registered(r.key())) { // its context's check did not fail it (not sticky, or gone)
                HostFunctions.failKey(r.key(), CudaResults.exception(r.status(), "a CUDA stream callback reported"));
            }
        }
        lastFaultHandledNanos = System.nanoTime();
    }

    private static void checkQuietly(long ctx) {
        try {
            check(ctx);
        } catch (RuntimeException | Error e) { // never let the watch die; a failed check repeats when next due
            LOG.log(System.Logger.Level.DEBUG, "CUDA fault watch: checking context 0x" + Long.toHexString(ctx)
                    + " failed", e);
        }
    }

    /** Checks one context; on a fatal result fails its registrations. */
    static void check(long ctx) {
        CHECKS.incrementAndGet();
        long t0 = System.nanoTime();
        java.lang.foreign.MemorySegment context = java.lang.foreign.MemorySegment.ofAddress(ctx);
        SyncException fault = null;
        try (CudaDriver.Pushed ignored = CudaDriver.Pushed.pushHeld(context, "CUDA fault watch")) {
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
            int n = HostFunctions.failContext(ctx, fault);
            lastFaultHandledNanos = System.nanoTime();
            LOG.log(System.Logger.Level.DEBUG, "CUDA fault watch: context 0x" + Long.toHexString(ctx)
                    + " failed (" + fault.getMessage() + "); " + n + " wait(s) failed");
        }
    }
}
