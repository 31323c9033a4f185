package io.gpusync.benchmarks.cuda;

import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.test.cuda.CudaWorkQueue;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPolicy;
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
 * Launch → "the host knows" latency on a real GPU, per strategy, per kernel length, with N waits in flight —
 * issue 5's table, extended for issue 15 (kernels past the spin budget).
 *
 * <pre>
 * bash .device/setup && .device/java io.gpusync.benchmarks.cuda.CudaLatency [iterations] [out.md] [kernels] [in-flight] [queue|user]
 *   e.g. CudaLatency 1000 cuda.md 1us,100us,1ms,10ms 1,1000
 * </pre>
 *
 * Each iteration launches a one-thread {@code %globaltimer} spin kernel of the given length on an idle stream,
 * records the point, and times from just before the launch to the moment the strategy sees completion (for
 * gpusync: inside {@code onComplete}). Rows of long kernels run fewer iterations (≈ 0.75 s per row, at least
 * 100); the report is rewritten after every row. "In flight" = N − 1 other waits registered with the default engine
 * on CUDA events recorded on a second stream behind a kernel that spins for the whole run; they never complete
 * (they are cancelled after their rows). With {@code queue} (the default) those events are the second stream's
 * {@code CudaWorkQueue.recordEvent()}s, which share one stream callback (the stream's order); with {@code user}
 * they are {@code CudaEvents.record}s of the stream, one callback each, so they fill the callback room and the
 * measured waits past their spin are deferred. CPU = CPU time of gpusync's threads plus the measuring thread /
 * wall time while the strategy ran (1.0 = one core busy; the driver's own threads are not counted). The report
 * ends with the goals' table: gpusync's event waits under {@code WaitPolicy.LOW_CPU} and the default against a
 * thread blocked on a BlockingSync event, p50 ratio and cores side by side, then each row's CPU per iteration by
 * thread group ({@link ThreadCpu}: the measuring thread, each gpusync thread group, and the rest of the process, which
 * is mostly the driver's own threads). Raw baselines are what a hand-written
 * Java program would do over the same FFM bindings; the C baselines measured on this kind of machine are quoted in
 * NOTES.md.
 */
public final class CudaLatency {
    private CudaLatency() {
    }

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        Path out = args.length > 1 ? Path.of(args[1]) : null;
        long[] kernels = args.length > 2 ? parseKernels(args[2]) : new long[] {1_000};
        boolean userEvents = args.length > 4 && args[4].equals("user");
        int[] inFlights = args.length > 3
                ? Arrays.stream(args[3].split(",")).mapToInt(s -> Integer.parseInt(s.trim().replace("_", ""))).toArray()
                : new int[] {1, 1_000, 10_000};
        StringBuilder md = new StringBuilder();
        StringBuilder breakdowns = new StringBuilder(); // the report's last table: a line per row
        CudaWorkQueue background = CudaWorkQueue.open(0);
        try (CudaWorkQueue q = CudaWorkQueue.open(0)) { // opened first: a module load waits for the device to idle
            // one SM kept busy for the whole run: the N - 1 other waits are events recorded behind it, never completing
            background.launchSpin(Duration.ofHours(1).toNanos());
            md.append("CUDA launch → completion seen, ").append(q.deviceName()).append(", in-flight waits on ")
                    .append(userEvents ? "user-recorded events (a callback each)" : "a queue's events (one callback)")
                    .append(", up to ")
                    .append(iterations).append(" iterations per row (fewer for long kernels: ≈ 0.75 s per row), ")
                    .append(java.time.LocalDate.now()).append("\n\n");
            md.append("| kernel | in flight | strategy | iterations | p50 µs | p90 µs | p99 µs | CPU of waiting threads (cores) |\n"
                    + "|---:|---:|---|---:|---:|---:|---:|---:|\n");
            SyncEngine defaults = GpuSync.builder().name("cuda-default").build();
            SyncEngine callbackOnly = GpuSync.builder().name("cuda-callback").waitPolicy(WaitPolicy.LOW_CPU).build();
            List<Row> rows = new ArrayList<>();
            try {
                for (int inFlight : inFlights) {
                    List<Disposable> others = occupy(background, defaults, inFlight - 1, userEvents);
                    for (long kernel : kernels) {
                        Map<String, Function<CudaWorkQueue, Long>> strategies = new LinkedHashMap<>();
                        strategies.put("raw cuEventQuery spin (1 thread)", qq -> rawQuerySpin(qq, kernel));
                        strategies.put("raw cuEventSynchronize (spinning default)", qq -> rawSynchronize(qq, kernel));
                        strategies.put(BLOCKING_SYNC, qq -> rawBlockingSync(qq, kernel));
                        strategies.put("raw mapped-word spin (host timeline)", qq -> rawTimelineSpin(qq, kernel));
                        strategies.put(DEFAULT_EVENT, qq -> viaEngine(qq, defaults, false, kernel));
                        strategies.put("gpusync host timeline (default)", qq -> viaEngine(qq, defaults, true, kernel));
                        strategies.put(LOW_CPU_EVENT, qq -> viaEngine(qq, callbackOnly, false, kernel));
                        strategies.put("gpusync host timeline, LOW_CPU", qq -> viaEngine(qq, callbackOnly, true, kernel));
                        int n = (int) Math.min(iterations, Math.max(100, 750_000_000L / Math.max(kernel, 1)));
                        for (var e : strategies.entrySet()) {
                            rows.add(row(md, breakdowns, kernel, inFlight, e.getKey(), q, n, e.getValue()));
                            save(out, md, rows); // row by row: a run cut short by a device time limit keeps what it measured
                        }
                    }
                    String idle = idleRow(inFlight);
                    System.err.print(idle);
                    md.append(idle);
                    save(out, md, rows);
                    others.forEach(Disposable::dispose);
                }
                md.append(summary(rows));
                md.append("\nCPU µs per iteration by thread group (threads named with trailing digits dropped; the"
                        + " rest of the process is the driver's and the JVM's other threads):\n\n"
                        + "| kernel | in flight | strategy | CPU µs per iteration |\n|---:|---:|---|---|\n")
                        .append(breakdowns);
                save(out, md, List.of());
            } finally {
                defaults.dispose();
                callbackOnly.dispose();
            }
            System.out.print(md);
            save(out, md);
            // before the queue's close: the background kernel still spins, and the close would wait the hour for it
            System.exit(0);
        }
    }

    private static void save(Path out, StringBuilder md) throws IOException {
        save(out, md, List.of());
    }

    /** Writes the rows so far, with the goals' table of {@code rows} after them (rewritten as rows are added). */
    private static void save(Path out, StringBuilder md, List<Row> rows) throws IOException {
        if (out != null) {
            Files.writeString(out, rows.isEmpty() ? md.toString() : md + summary(rows));
        }
    }

    private static long[] parseKernels(String list) {
        return Arrays.stream(list.split(",")).map(String::trim).mapToLong(k -> {
            if (k.endsWith("us")) {
                return Long.parseLong(k.substring(0, k.length() - 2)) * 1_000;
            } else if (k.endsWith("ms")) {
                return Long.parseLong(k.substring(0, k.length() - 2)) * 1_000_000;
            }
            return Long.parseLong(k);
        }).toArray();
    }

    private static String kernelLabel(long ns) {
        return ns >= 1_000_000 ? ns / 1_000_000 + " ms" : ns / 1_000 + " µs";
    }

    /** Registers n waits on CUDA events recorded behind the background stream's hour-long kernel (never complete). */
    private static List<Disposable> occupy(CudaWorkQueue background, SyncEngine engine, int n, boolean userEvents) {
        List<Disposable> waits = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            SyncPoint.CudaEvent p = userEvents ? io.gpusync.cuda.CudaEvents.record(background.stream(), background.context())
                    : background.recordEvent();
            waits.add(engine.await(p, SyncPoint.FOREVER).subscribe(v -> { }, e -> { }, () -> { }));
        }
        return waits;
    }

    private static final String BLOCKING_SYNC = "raw BlockingSync event + cuEventSynchronize";
    private static final String DEFAULT_EVENT = "gpusync event (default)";
    private static final String LOW_CPU_EVENT = "gpusync event, LOW_CPU";

    /** One measured row: p50 in ns and the waiting threads' CPU in cores. */
    private record Row(long kernel, int inFlight, String strategy, double p50Nanos, double cores) {
    }

    /**
     * The goals' table: gpusync's event waits, LOW_CPU and default, against a thread blocked on a BlockingSync event,
     * for each kernel and number in flight — p50 ratio and cores side by side, with the bounds (LOW_CPU: p50
     * ≤ 1.05× BlockingSync at ≤ 0.05 cores).
     */
    private static String summary(List<Row> rows) {
        StringBuilder b = new StringBuilder("\n| kernel | in flight | BlockingSync p50 µs | BlockingSync cores | LOW_CPU p50 µs"
                + " | LOW_CPU / BlockingSync | LOW_CPU cores | default p50 µs | default / BlockingSync | default cores"
                + " | LOW_CPU ≤ 1.05× at ≤ 0.05 cores |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Row base : rows) {
            if (!base.strategy().equals(BLOCKING_SYNC)) {
                continue;
            }
            Row low = find(rows, base, LOW_CPU_EVENT);
            Row def = find(rows, base, DEFAULT_EVENT);
            if (low == null || def == null) {
                continue;
            }
            double lowRatio = low.p50Nanos() / base.p50Nanos();
            b.append(String.format("| %s | %,d | %.1f | %.3f | %.1f | %.2f× | %.3f | %.1f | %.2f× | %.3f | %s |%n",
                    kernelLabel(base.kernel()), base.inFlight(), base.p50Nanos() / 1e3, base.cores(), low.p50Nanos() / 1e3,
                    lowRatio,
                    low.cores(), def.p50Nanos() / 1e3, def.p50Nanos() / base.p50Nanos(), def.cores(),
                    lowRatio <= 1.05 && low.cores() <= 0.05 ? "met" : "missed"));
        }
        return b.toString();
    }

    private static Row find(List<Row> rows, Row like, String strategy) {
        return rows.stream().filter(r -> r.kernel() == like.kernel() && r.inFlight() == like.inFlight()
                && r.strategy().equals(strategy)).findFirst().orElse(null);
    }

    private static Row row(StringBuilder md, StringBuilder breakdowns, long kernel, int inFlight, String name,
                           CudaWorkQueue q, int iterations,
                           Function<CudaWorkQueue, Long> strategy) {
        for (int i = 0; i < Math.min(200, iterations / 10); i++) {
            strategy.apply(q); // warm-up
        }
        long[] samples = new long[iterations];
        ThreadCpu byGroup0 = ThreadCpu.now();
        long cpu0 = cpuNanos();
        long wall0 = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            samples[i] = strategy.apply(q);
        }
        double cores = (cpuNanos() - cpu0) / (double) (System.nanoTime() - wall0);
        String breakdown = ThreadCpu.now().since(byGroup0, iterations);
        Arrays.sort(samples);
        md.append(String.format("| %s | %,d | %s | %,d | %.1f | %.1f | %.1f | %.2f |%n", kernelLabel(kernel), inFlight, name,
                iterations, pct(samples, 0.50), pct(samples, 0.90), pct(samples, 0.99), cores));
        breakdowns.append(String.format("| %s | %,d | %s | %s |%n", kernelLabel(kernel), inFlight, name, breakdown));
        System.err.printf("  %6s %,6d in flight  %-45s p50 %.1f µs  %.3f cores  (CPU µs per iteration: %s)%n",
                kernelLabel(kernel), inFlight, name, pct(samples, 0.50), cores, breakdown);
        return new Row(kernel, inFlight, name, pct(samples, 0.50) * 1e3, cores);
    }

    private static String idleRow(int inFlight) throws InterruptedException {
        Thread.sleep(200); // past every spin budget
        long cpu0 = cpuNanos();
        long wall0 = System.nanoTime();
        Thread.sleep(1000);
        double cores = (cpuNanos() - cpu0) / (double) (System.nanoTime() - wall0);
        return String.format("| – | %,d | gpusync idle: %,d pending waits, nothing completing | – | – | – | – | %.3f |%n",
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

    private static long viaEngine(CudaWorkQueue q, SyncEngine engine, boolean timeline, long kernel) {
        AtomicLong done = new AtomicLong();
        CountDownLatch latch = new CountDownLatch(1);
        long t0 = System.nanoTime();
        q.launchSpin(kernel);
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

    private static long rawQuerySpin(CudaWorkQueue q, long kernel) {
        long t0 = System.nanoTime();
        q.launchSpin(kernel);
        SyncPoint.CudaEvent p = q.recordEvent();
        while (Cuda.cuEventQuery(p.event()) != 0) {
            Thread.onSpinWait();
        }
        long t = System.nanoTime() - t0;
        p.waiter().close();
        return t;
    }

    private static long rawSynchronize(CudaWorkQueue q, long kernel) {
        long t0 = System.nanoTime();
        q.launchSpin(kernel);
        SyncPoint.CudaEvent p = q.recordEvent();
        check(Cuda.cuEventSynchronize(p.event()));
        long t = System.nanoTime() - t0;
        p.waiter().close();
        return t;
    }

    private static final ThreadLocal<MemorySegment> BLOCKING_EVENT = new ThreadLocal<>();

    private static long rawBlockingSync(CudaWorkQueue q, long kernel) {
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
        q.launchSpin(kernel);
        check(Cuda.cuEventRecord(event, q.stream()));
        check(Cuda.cuEventSynchronize(event));
        return System.nanoTime() - t0;
    }

    private static long rawTimelineSpin(CudaWorkQueue q, long kernel) {
        long t0 = System.nanoTime();
        q.launchSpin(kernel);
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
