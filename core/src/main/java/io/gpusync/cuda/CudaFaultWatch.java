package io.gpusync.cuda;

import io.gpusync.SyncException;
import io.gpusync.bindings.cuda.Cuda;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Fails the waits that sit behind CUDA host functions when their context gets a sticky error. CUDA never runs
 * host functions on such a context, so without this a wait past its spin budget — engine or blocking, with
 * {@code FOREVER} as well — would stay pending for good (CUDA.jl re-queries on a timer for the same reason).
 *
 * <p>One daemon thread ({@code gpusync-cuda-fault-watch}), started on first use. While any context has host-function
 * registrations outstanding ({@link HostFunctions#watchedContexts()}), it checks each such context every
 * interval — push, {@code cuStreamQuery(NULL)} (non-blocking; returns the context's sticky error, if any), pop —
 * and on a fatal result fails every registration of that context through {@link HostFunctions#failContext}
 * with the {@link io.gpusync.DeviceLostException} the check produced. The interval starts at
 * {@value #FIRST_INTERVAL_NANOS} ns when a context gets its first registration and doubles up to
 * {@value #MAX_INTERVAL_NANOS} ns while registrations stay outstanding, so a fault is reported within ≈25 ms
 * plus one hand-over (measured on the H200 over 495 waits of three faults: p99 10.6–17.9 ms in three runs); with nothing
 * outstanding the thread parks without a timeout (no CPU at all). A check is skipped when a driver query in that
 * context succeeded within the interval ({@link #vouch}).
 *
 * <p><b>Cost.</b> While waits are outstanding the watch costs its timer, 40 wake-ups a second, and one check per
 * watched context and wake-up, however many waits there are. What that costs depends on the machine more than on
 * the watch: a machine that is busy anyway spends 6–16 µs on a wake-up and ≈ 1 µs on each of the check's three
 * driver calls (≈ 0.04–0.08 % of a core in all), while an idle PVM guest (the H200's) charges the thread's clock
 * 50–60 µs for the wake-up and 12–25 µs per driver call for leaving and re-entering idle — measured there with
 * 1,000 waits pending: 0.31–0.45 % of a core, of which a bare thread on the same timer 0.11–0.14 %
 * ({@code benchmarks/results/timer-wake-cost.md}). The interval is the trade: 50 ms p99 from fault to error leaves
 * room for ≈ 25 ms, and a longer one would buy CPU with fault latency.
 *
 * <p>The check never synchronizes with the device ({@code cuStreamQuery} only reads state), so a context blocked
 * behind a host gate is checked without stalling. Thread-safe.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
final class CudaFaultWatch {
    static final long FIRST_INTERVAL_NANOS = 1_000_000L;
    static final long MAX_INTERVAL_NANOS = 25_000_000L;
    private static final System.Logger LOG = System.getLogger(CudaFaultWatch.class.getName());
    private static final AtomicLong CHECKS = new AtomicLong();
    private static final OnDemandDaemon THREAD = new OnDemandDaemon("gpusync-cuda-fault-watch", CudaFaultWatch::run);
    /** When a driver query in each context last succeeded outside the watch (nanoTime). */
    private static final java.util.concurrent.ConcurrentHashMap<Long, Long> VOUCHED =
            new java.util.concurrent.ConcurrentHashMap<>();
    private static volatile boolean rewind;
    /** When the last fault was detected and when its registrations had all been failed (nanoTime; tests). */
    static volatile long lastFaultDetectedNanos;
    static volatile long lastFaultHandledNanos;
    static volatile long lastCheckNanos;

    private CudaFaultWatch() {
    }

    /** A context got its first registration: make sure the thread runs and checks soon. */
    static void watch() {
        rewind = true;
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
            var contexts = HostFunctions.watchedContexts();
            if (contexts.isEmpty()) {
                LockSupport.park(CudaFaultWatch.class);
                interval = FIRST_INTERVAL_NANOS;
                continue;
            }
            if (rewind) {
                rewind = false;
                interval = FIRST_INTERVAL_NANOS;
            }
            LockSupport.parkNanos(CudaFaultWatch.class, interval);
            interval = Math.min(interval * 2, MAX_INTERVAL_NANOS);
            long now = System.nanoTime();
            for (long ctx : HostFunctions.watchedContexts()) {
                Long vouched = VOUCHED.get(ctx);
                if (vouched != null && now - vouched < interval) {
                    continue; // a driver query in it succeeded within this interval: no sticky error then
                }
                try {
                    check(ctx);
                } catch (RuntimeException | Error e) { // never let the watch die; a failed check repeats each interval
                    LOG.log(System.Logger.Level.DEBUG, "CUDA fault watch: checking context 0x"
                            + Long.toHexString(ctx) + " failed", e);
                }
            }
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
