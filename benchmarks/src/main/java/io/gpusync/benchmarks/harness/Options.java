package io.gpusync.benchmarks.harness;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The harness's command-line options ({@code --name=value}); every default is what the committed
 * RESULTS.md was made with, except {@link #pathSubjects}: its {@code vulkan-queue}, {@code opencl-kernel} and
 * {@code egl-reusable} came after it. The CUDA subjects ({@code cuda-timeline}, {@code cuda-event}) run only when
 * named (see RESULTS.md for why); CUDA figures come from {@code io.gpusync.benchmarks.cuda.CudaLatency}
 * (benchmarks/results/cuda-h200.md).
 */
public final class Options {
    /** Where RESULTS.md and results/ go. */
    public Path out = Path.of(".");
    /** Numbers of concurrent pending waits. */
    public List<Integer> ns = List.of(1, 1_000, 10_000, 100_000);
    /** Subjects of the approach matrix. */
    public List<String> subjects = List.of("host-timeline", "eventfd");
    /** Approaches of the matrix. */
    public List<String> approaches = List.of("a", "b", "c", "d", "e");
    /**
     * Subjects of the per-path table (gpusync default vs a raw thread). Of the default list, subjects whose
     * driver is missing here are dropped with a printed reason (CUDA off an NVIDIA machine); a subject named
     * with {@code --path-subjects=} is kept and its cells reported as not run.
     */
    public List<String> pathSubjects = DEFAULT_PATH_SUBJECTS;
    /** The default {@link #pathSubjects}. */
    public static final List<String> DEFAULT_PATH_SUBJECTS = List.of("host-timeline", "eventfd", "host-timeline/wait-set",
            "host-timeline/blocking", "host-timeline/probe", "vulkan-timeline", "vulkan-queue", "opencl-user-event",
            "opencl-kernel", "egl-reusable");
    /** Wake-latency samples per cell (at most). */
    public int latencySamples = 2_000;
    /** Time budget of the latency phase per cell. */
    public Duration latencyBudget = Duration.ofSeconds(2);
    /** Cancel samples per cell (at most). */
    public int cancelSamples = 500;
    /** Time budget of the cancel phase per cell. */
    public Duration cancelBudget = Duration.ofSeconds(1);
    /** Time from subscribe to signal of a measured wait (the "GPU work"). */
    public Duration work = Duration.ofNanos(200_000);
    /** A measured wait not complete after this is a miss (3 misses end the phase). */
    public Duration sampleCap = Duration.ofMillis(200);
    /** A cancelled wait not freed after this is a miss (3 misses end the phase). */
    public Duration freeCap = Duration.ofMillis(50);
    /** Longest time to subscribe the N background waits (the cell is capped beyond). */
    public Duration subscribeCap = Duration.ofSeconds(20);
    /** Longest time the burst of N signals may take to complete. */
    public Duration burstCap = Duration.ofSeconds(20);
    /** Settling time after subscribing, before measuring heap, threads and idle CPU. */
    public Duration settle = Duration.ofMillis(500);
    /** Window over which idle CPU is measured. */
    public Duration idleWindow = Duration.ofSeconds(2);
    /** Timeout of every wait. */
    public Duration waitTimeout = Duration.ofSeconds(120);
    /** Whether to also measure heap per wait at the largest N with SyncPoint.FOREVER (no timer). */
    public boolean foreverHeapCheck = true;
    /** Whether to draw the PNG plots (a single-N run can hang JFreeChart's log axis: issue 15's scale runs). */
    public boolean plots = true;
    /** Whether to run a discarded warm-up pass (JIT) over the path subjects and N = 1 cells first. */
    public boolean warmup = true;
    /** What the harness found and did about RLIMIT_NOFILE (set by the run; recorded in RESULTS.md). */
    public String fileLimit = "";
    /** The command line that ran (recorded in RESULTS.md). */
    public String command = "";

    /** Parses {@code --name=value} arguments; unknown names are an error. */
    public static Options parse(String... args) {
        Options o = new Options();
        for (String a : args) {
            if (a.equals("--smoke")) {
                o.smoke();
                continue;
            }
            int eq = a.indexOf('=');
            if (!a.startsWith("--") || eq < 0) {
                throw new IllegalArgumentException("expected --name=value, got " + a + "\n" + usage());
            }
            String k = a.substring(2, eq);
            String v = a.substring(eq + 1);
            switch (k) {
                case "out" -> o.out = Path.of(v);
                case "n" -> o.ns = Arrays.stream(v.split(",")).map(s -> Integer.parseInt(s.trim().replace("_", ""))).toList();
                case "subjects" -> o.subjects = list(v);
                case "approaches" -> o.approaches = list(v);
                case "path-subjects" -> o.pathSubjects = list(v);
                case "latency-samples" -> o.latencySamples = Integer.parseInt(v);
                case "latency-budget-ms" -> o.latencyBudget = Duration.ofMillis(Long.parseLong(v));
                case "cancel-samples" -> o.cancelSamples = Integer.parseInt(v);
                case "cancel-budget-ms" -> o.cancelBudget = Duration.ofMillis(Long.parseLong(v));
                case "work-us" -> o.work = Duration.ofNanos(Long.parseLong(v) * 1_000);
                case "subscribe-cap-s" -> o.subscribeCap = Duration.ofSeconds(Long.parseLong(v));
                case "burst-cap-s" -> o.burstCap = Duration.ofSeconds(Long.parseLong(v));
                case "settle-ms" -> o.settle = Duration.ofMillis(Long.parseLong(v));
                case "idle-window-ms" -> o.idleWindow = Duration.ofMillis(Long.parseLong(v));
                case "wait-timeout-s" -> o.waitTimeout = Duration.ofSeconds(Long.parseLong(v));
                case "forever-heap-check" -> o.foreverHeapCheck = Boolean.parseBoolean(v);
                case "warmup" -> o.warmup = Boolean.parseBoolean(v);
                case "plots" -> o.plots = Boolean.parseBoolean(v);
                case "command" -> o.command = v;
                default -> throw new IllegalArgumentException("unknown option --" + k + "\n" + usage());
            }
        }
        return o;
    }

    /** Tiny sizes and budgets: seconds in all (the CI smoke). */
    public Options smoke() {
        ns = List.of(1, 50);
        latencySamples = 30;
        latencyBudget = Duration.ofMillis(200);
        cancelSamples = 10;
        cancelBudget = Duration.ofMillis(100);
        sampleCap = Duration.ofMillis(50);
        freeCap = Duration.ofMillis(20);
        subscribeCap = Duration.ofSeconds(5);
        burstCap = Duration.ofSeconds(5);
        settle = Duration.ofMillis(20);
        idleWindow = Duration.ofMillis(50);
        waitTimeout = Duration.ofSeconds(30);
        foreverHeapCheck = false;
        warmup = false;
        return this;
    }

    /** Short budgets for the discarded warm-up pass. */
    Options warmupCopy() {
        Options w = new Options();
        w.latencySamples = 1_000;
        w.latencyBudget = Duration.ofMillis(400);
        w.cancelSamples = 100;
        w.cancelBudget = Duration.ofMillis(100);
        w.sampleCap = sampleCap;
        w.freeCap = Duration.ofMillis(10);
        w.settle = Duration.ZERO;
        w.idleWindow = Duration.ofMillis(10);
        w.work = work;
        w.waitTimeout = waitTimeout;
        return w;
    }

    private static List<String> list(String v) {
        List<String> l = new ArrayList<>();
        for (String s : v.split(",")) {
            if (!s.isBlank()) {
                l.add(s.trim());
            }
        }
        return l;
    }

    public static String usage() {
        return """
                usage: Harness [--smoke] [--out=DIR] [--n=1,1000,10000,100000] [--subjects=host-timeline,eventfd]
                               (subjects: host-timeline, eventfd, host-timeline/wait-set, host-timeline/blocking,
                                host-timeline/probe, vulkan-timeline, vulkan-queue, opencl-user-event, opencl-kernel,
                                egl-reusable, cuda-timeline, cuda-event)
                               [--approaches=a,b,c,d,e] [--path-subjects=...] [--latency-samples=2000]
                               [--latency-budget-ms=2000] [--cancel-samples=500] [--cancel-budget-ms=1000]
                               [--work-us=200] [--subscribe-cap-s=20] [--burst-cap-s=20] [--settle-ms=500]
                               [--idle-window-ms=2000] [--wait-timeout-s=120] [--forever-heap-check=true] [--warmup=true] [--plots=true]""";
    }
}
