package io.gpusync.benchmarks.cuda;

import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.cuda.CudaProducers.CudaWorkQueue;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import reactor.core.Disposable;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Launch → "the host knows" latency on a real GPU, per strategy, with N waits in flight — issue 5's table.
 *
 * <pre>
 * bash .device/setup && .device/java io.gpusync.benchmarks.cuda.CudaLatency [iterations] [out.md]
 * </pre>
 *
 * Each iteration launches a 1 µs one-thread kernel on an idle stream, records the point, and times from just
 * before the launch to the moment the strategy sees completion (for gpusync: inside {@code onComplete}).
 * "In flight" = N − 1 other waits registered with the engine on a second stream that is busy for the whole
 * measurement (they never complete during it). CPU = CPU time of gpusync's threads plus the measuring thread
 * / wall time while the strategy ran (1.0 = one core busy; the driver's own threads are not counted). Raw baselines are what a hand-written Java program would do over the same FFM
 * bindings; the C baselines measured on this kind of machine are quoted in NOTES.md.
 */
public final class CudaLatency {
    private static final long KERNEL_NS = 1_000;

    private CudaLatency() {
    }

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        Path out = args.length > 1 ? Path.of(args[1]) : null;
        StringBuilder md = new StringBuilder();
        try (CudaWorkQueue q = CudaWorkQueue.open(0); CudaWorkQueue background = CudaWorkQueue.open(0)) {
            md.append("CUDA launch → completion seen, ").append(q.deviceName()).append(", 1 µs kernel, ")
                    .append(iterations).append(" iterations per row, ").append(java.time.LocalDate.now()).append("\n\n");
            md.append("| in flight | strategy | p50 µs | p90 µs | p99 µs | CPU of waiting threads (cores) |\n|---:|---|---:|---:|---:|---:|\n");
            SyncEngine defaults = GpuSync.builder().name("cuda-default").build();
            SyncEngine callbackOnly = GpuSync.builder().name("cuda-callback").spinBudget(Duration.ZERO).build();
            try {
                for (int inFlight : new int[] {1, 1_000, 10_000}) {
                    List<Disposable> others = occupy(background, defaults, inFlight - 1);
                    Map<String, Function<CudaWorkQueue, Long>> strategies = new LinkedHashMap<>();
                    strategies.put("raw cuEventQuery spin (1 thread)", CudaLatency::rawQuerySpin);
                    strategies.put("raw cuEventSynchronize (spinning default)", CudaLatency::rawSynchronize);
                    strategies.put("raw BlockingSync event + cuEventSynchronize", CudaLatency::rawBlockingSync);
                    strategies.put("raw mapped-word spin (host timeline)", CudaLatency::rawTimelineSpin);
                    strategies.put("gpusync event (default: spin 50 µs, then host fn)", qq -> viaEngine(qq, defaults, false));
                    strategies.put("gpusync host timeline (default)", qq -> viaEngine(qq, defaults, true));
                    strategies.put("gpusync event, host function only (no spin)", qq -> viaEngine(qq, callbackOnly, false));
                    for (var e : strategies.entrySet()) {
                        row(md, inFlight, e.getKey(), q, iterations, e.getValue());
                    }
                    md.append(idleRow(inFlight, defaults));
                    others.forEach(Disposable::dispose);
                    background.synchronize();
                }
            } finally {
                defaults.dispose();
                callbackOnly.dispose();
            }
        }
        System.out.print(md);
        if (out != null) {
            Files.writeString(out, md.toString());
        }
    }

    /** Registers n waits on events of a stream kept busy for the whole measurement. */
    private static List<Disposable> occupy(CudaWorkQueue background, SyncEngine engine, int n) {
        List<Disposable> waits = new ArrayList<>(n);
        if (n == 0) {
            return waits;
        }
        background.launchSpin(Duration.ofSeconds(10).toNanos());
        for (int i = 0; i < n; i++) {
            SyncPoint p = background.recordEvent();
            waits.add(engine.await(p, SyncPoint.FOREVER).subscribe());
        }
        return waits;
    }

    private static void row(StringBuilder md, int inFlight, String name, CudaWorkQueue q, int iterations,
                            Function<CudaWorkQueue, Long> strategy) {
        for (int i = 0; i < Math.min(200, iterations / 10); i++) {
            strategy.apply(q); // warm-up
        }
        long[] samples = new long[iterations];
        long cpu0 = cpuNanos();
        long wall0 = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            samples[i] = strategy.apply(q);
        }
        double cores = (cpuNanos() - cpu0) / (double) (System.nanoTime() - wall0);
        Arrays.sort(samples);
        md.append(String.format("| %,d | %s | %.1f | %.1f | %.1f | %.2f |%n", inFlight, name, pct(samples, 0.50),
                pct(samples, 0.90), pct(samples, 0.99), cores));
        System.err.printf("  %,6d in flight  %-50s p50 %.1f µs%n", inFlight, name, pct(samples, 0.50));
    }

    private static String idleRow(int inFlight, SyncEngine engine) throws InterruptedException {
        Thread.sleep(200); // past every spin budget
        long cpu0 = cpuNanos();
        long wall0 = System.nanoTime();
        Thread.sleep(1000);
        double cores = (cpuNanos() - cpu0) / (double) (System.nanoTime() - wall0);
        return String.format("| %,d | gpusync idle: %,d pending waits, nothing completing | – | – | – | %.3f |%n",
                inFlight, Math.max(0, inFlight - 1), cores);
    }

    private static double pct(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(p * sorted.length))] / 1000.0;
    }

    /**
     * CPU time of the threads that do the waiting: gpusync's own threads (pollers, loops, pools) and the
     * measuring thread (which spins for the raw baselines). The CUDA driver's and the JVM's own threads are
     * left out: they run for every strategy alike.
     */
    private static long cpuNanos() {
        java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t == Thread.currentThread() || t.getName().startsWith("gpusync-")) {
                long c = threads.getThreadCpuTime(t.threadId());
                sum += Math.max(0, c);
            }
        }
        return sum;
    }

    private static long viaEngine(CudaWorkQueue q, SyncEngine engine, boolean timeline) {
        AtomicLong done = new AtomicLong();
        CountDownLatch latch = new CountDownLatch(1);
        long t0 = System.nanoTime();
        q.launchSpin(KERNEL_NS);
        SyncPoint p = timeline ? q.advanceTimeline() : q.recordEvent();
        engine.await(p, Duration.ofSeconds(10)).subscribe(v -> { }, e -> latch.countDown(), () -> {
            done.set(System.nanoTime());
            latch.countDown();
        });
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        if (!timeline) {
            p.waiter().close();
        }
        return done.get() - t0;
    }

    private static long rawQuerySpin(CudaWorkQueue q) {
        long t0 = System.nanoTime();
        q.launchSpin(KERNEL_NS);
        SyncPoint.CudaEvent p = q.recordEvent();
        while (Cuda.cuEventQuery(p.event()) != 0) {
            Thread.onSpinWait();
        }
        long t = System.nanoTime() - t0;
        p.waiter().close();
        return t;
    }

    private static long rawSynchronize(CudaWorkQueue q) {
        long t0 = System.nanoTime();
        q.launchSpin(KERNEL_NS);
        SyncPoint.CudaEvent p = q.recordEvent();
        check(Cuda.cuEventSynchronize(p.event()));
        long t = System.nanoTime() - t0;
        p.waiter().close();
        return t;
    }

    private static final ThreadLocal<MemorySegment> BLOCKING_EVENT = new ThreadLocal<>();

    private static long rawBlockingSync(CudaWorkQueue q) {
        MemorySegment event = BLOCKING_EVENT.get();
        if (event == null) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
                check(Cuda.cuCtxPushCurrent_v2(q.context()));
                check(Cuda.cuEventCreate(p, Cuda.CU_EVENT_BLOCKING_SYNC() | Cuda.CU_EVENT_DISABLE_TIMING()));
                check(Cuda.cuCtxPopCurrent_v2(arena.allocate(ValueLayout.ADDRESS)));
                event = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                BLOCKING_EVENT.set(event);
            }
        }
        long t0 = System.nanoTime();
        q.launchSpin(KERNEL_NS);
        check(Cuda.cuEventRecord(event, q.stream()));
        check(Cuda.cuEventSynchronize(event));
        return System.nanoTime() - t0;
    }

    private static long rawTimelineSpin(CudaWorkQueue q) {
        long t0 = System.nanoTime();
        q.launchSpin(KERNEL_NS);
        SyncPoint p = q.advanceTimeline();
        while (!p.isSignaled()) {
            Thread.onSpinWait();
        }
        return System.nanoTime() - t0;
    }

    private static void check(int r) {
        if (r != 0) {
            throw new IllegalStateException("CUDA error " + r);
        }
    }
}
