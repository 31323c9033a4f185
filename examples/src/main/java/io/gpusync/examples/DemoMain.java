package io.gpusync.examples;

import io.gpusync.examples.device.Device;
import io.gpusync.examples.device.DeviceOptions;
import io.gpusync.examples.device.Devices;
import io.gpusync.examples.device.KernelModel;
import io.gpusync.examples.device.Units;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The demo's command line: serves HTTP until stopped, or with {@code --load} runs a short load against itself
 * over loopback, prints a summary, writes a latency plot and exits.
 */
@Command(name = "gpusync-demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"A Reactor Netty HTTP service whose requests wait for GPU work through gpusync, on the",
                "server's own event loops (no thread per request). Without a GPU it runs on a simulated device."})
public final class DemoMain implements Callable<Integer> {

    @Option(names = "--backend", defaultValue = "auto", description = "auto, cuda, vulkan, opencl, cpu or d3d12 (by name only) (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "address to bind in serve mode (default: ${DEFAULT-VALUE})")
    String host;

    @Option(names = "--port", defaultValue = "8080", description = "port in serve mode, 0 = any (default: ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--timeout", defaultValue = "2s", converter = DurationConverter.class,
            description = "per-request timeout when ?timeoutMs= is absent (default: ${DEFAULT-VALUE})")
    Duration timeout;

    @Option(names = "--stuck-after", defaultValue = "30s", converter = DurationConverter.class,
            description = "/health is DOWN (503) while a device queue has held unfinished work this long (default: ${DEFAULT-VALUE})")
    Duration stuckAfter;

    @Option(names = "--loops", defaultValue = "0", description = "server event loop threads, 0 = Reactor Netty's default")
    int loops;

    @Option(names = "--load", converter = DurationConverter.class,
            description = "run a load of this length against an ephemeral loopback port, print a summary and exit")
    Duration load;

    @Option(names = "--warmup", defaultValue = "1s", converter = DurationConverter.class,
            description = "load mode: uncounted warm-up first (default: ${DEFAULT-VALUE})")
    Duration warmup;

    @Option(names = "--concurrency", defaultValue = "128", description = "load mode: requests in flight (default: ${DEFAULT-VALUE})")
    int concurrency;

    @Option(names = "--batch", description = "load mode: GET /batch?n=N (N units through awaitEach per request) instead of /work")
    Integer batch;

    @Option(names = "--batch-in-flight", defaultValue = "64",
            description = "load mode with --batch: the inFlight of each /batch request (default: ${DEFAULT-VALUE})")
    int batchInFlight;

    @Option(names = "--work-ms", description = "load mode: ?ms= of every request (default: the device's kernel model)")
    Double workMs;

    @Option(names = "--await",
            description = {"load mode: GET /compute (real work: CUDA copies its input in, runs a matrix kernel and copies",
                    "the result out; other backends stand in) awaited by gpusync, elastic-blocking or virtual-threads;",
                    "every answer's checksum is checked, a wrong one fails the run"})
    String await;

    @Option(names = "--gpu-work", defaultValue = "200us", converter = DurationConverter.class,
            description = "/compute on CUDA: GPU time of one request; the kernel is timed at start to size it (default: ${DEFAULT-VALUE})")
    Duration gpuWork;

    @Option(names = "--compute-rounds", defaultValue = "0",
            description = "/compute on CUDA: matrix products per request instead of sizing them from --gpu-work (default: ${DEFAULT-VALUE})")
    int computeRounds;

    @Option(names = "--plot", defaultValue = "gpusync-demo-latency.png",
            description = {"load mode: PNG file for the latency CDF (default: ${DEFAULT-VALUE}); a relative path is",
                    "resolved against -D" + DemoMain.OUTPUT_DIR + " (Maven's exec sets examples/target), else the working directory"})
    Path plot;

    @Option(names = "--progress", defaultValue = "auto", description = "load mode: auto, bar, lines or off (default: ${DEFAULT-VALUE})")
    String progress;

    @Option(names = "--kernel-median", defaultValue = "200us", converter = DurationConverter.class,
            description = "simulated device: median kernel duration (default: ${DEFAULT-VALUE})")
    Duration kernelMedian;

    @Option(names = "--kernel-sigma", defaultValue = "0.5", description = "simulated device: log-normal sigma (default: ${DEFAULT-VALUE})")
    double kernelSigma;

    @Option(names = "--tail-probability", defaultValue = "0.002",
            description = "simulated device: share of kernels that are slow (default: ${DEFAULT-VALUE})")
    double tailProbability;

    @Option(names = "--tail-factor", defaultValue = "10", description = "simulated device: how much slower (default: ${DEFAULT-VALUE})")
    double tailFactor;

    @Option(names = "--queues", defaultValue = "4", description = "simulated device: in-order queues (default: ${DEFAULT-VALUE})")
    int queues;

    @Option(names = "--streams", defaultValue = "0",
            description = "CUDA: streams the requests are spread over (default 0: sized to the GPU, one per hardware work"
                    + " queue the driver gives a process, CUDA_DEVICE_MAX_CONNECTIONS or 8)")
    int streams;

    @Option(names = "--cuda-point", defaultValue = "event",
            description = "CUDA: each request's sync point, event (a recorded CUevent) or timeline (the next value of the"
                    + " stream's host-memory timeline: fewer driver calls per request) (default: ${DEFAULT-VALUE})")
    String cudaPoint;

    /** The system property naming the directory a relative {@code --plot} is written to. */
    static final String OUTPUT_DIR = "gpusync.demo.outputDir";

    private final PrintStream out = System.out;

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        int code = new CommandLine(new DemoMain()).execute(args);
        System.exit(code);
    }

    @Override
    public Integer call() throws Exception {
        if (concurrency < 1) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--concurrency must be ≥ 1");
        }
        if (workMs != null && !(workMs >= 0 && workMs <= DemoServer.MAX_WORK_MS)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--work-ms must be in [0, "
                    + DemoServer.MAX_WORK_MS + "] (the longest unit of work the demo accepts): " + workMs);
        }
        if (!stuckAfter.isPositive()) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--stuck-after must be positive: " + stuckAfter);
        }
        if (batch != null && (batch < 1 || batch > DemoServer.MAX_BATCH_UNITS
                || batchInFlight < 1 || batchInFlight > DemoServer.MAX_BATCH_IN_FLIGHT)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--batch must be in [1, "
                    + DemoServer.MAX_BATCH_UNITS + "] and --batch-in-flight in [1, " + DemoServer.MAX_BATCH_IN_FLIGHT + "]");
        }
        if (streams < 0 || streams > DeviceOptions.MAX_STREAMS) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--streams must be in [0, "
                    + DeviceOptions.MAX_STREAMS + "] (0: sized to the GPU): " + streams);
        }
        DeviceOptions.CudaPoint point;
        try {
            point = DeviceOptions.CudaPoint.named(cudaPoint);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
        }
        AwaitMode awaitMode = null;
        if (await != null) {
            try {
                awaitMode = AwaitMode.named(await);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
            }
        }
        DeviceOptions deviceOptions = new DeviceOptions(
                new KernelModel(kernelMedian, kernelSigma, tailProbability, tailFactor), queues, false, streams, point,
                new DeviceOptions.ComputeSizing(gpuWork, Math.max(0, computeRounds), Math.max(concurrency, 256)));
        Devices.Discovery discovery = Devices.open(backend, deviceOptions);
        try (Device device = discovery.device()) {
            return load != null ? runLoad(device, discovery, awaitMode) : serve(device, discovery);
        }
    }

    /**
     * Serves until the JVM is asked to stop (Ctrl-C, SIGTERM): the shutdown hook wakes this thread, which closes
     * the server, the engine and the device, and holds the JVM's exit until that is done (10 s at most). The JVM
     * then exits with 130 (SIGINT) or 143 (SIGTERM), which the demo's exec counts as success.
     */
    private int serve(Device device, Devices.Discovery discovery) throws InterruptedException {
        DemoServer.Options options = new DemoServer.Options(host, port, timeout, Duration.ofSeconds(60), loops, stuckAfter);
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            stop.countDown();
            try {
                closed.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "gpusync-demo-stop");
        try {
            try (DemoServer server = DemoServer.start(device, options)) {
                printHeader(server, discovery);
                out.println("  health    DOWN (503) while a device queue holds unfinished work for more than "
                        + Units.duration(stuckAfter.toNanos()) + " (--stuck-after)");
                out.println("  try       curl '" + server.baseUrl() + "/work?ms=1'   (also /work?timeoutMs=50&ms=500, /health, /metrics)");
                out.println("  stop      Ctrl-C (or SIGTERM)");
                out.flush();
                Runtime.getRuntime().addShutdownHook(hook);
                stop.await();
                out.println("gpusync demo: stopping (server, engine, device)");
            }
            device.close();
            out.println("gpusync demo: stopped");
            out.flush();
        } finally {
            closed.countDown();
        }
        return 0;
    }

    private int runLoad(Device device, Devices.Discovery discovery, AwaitMode awaitMode) throws Exception {
        LoadRunner.Progress mode = switch (progress.toLowerCase(Locale.ROOT)) {
            case "bar" -> LoadRunner.Progress.BAR;
            case "lines" -> LoadRunner.Progress.LINES;
            case "off" -> LoadRunner.Progress.OFF;
            default -> LoadRunner.Progress.auto();
        };
        String query = workMs == null ? "" : "ms=" + workMs;
        String endpoint = "/work";
        if (batch != null) {
            endpoint = "/batch";
            query = "n=" + batch + "&inFlight=" + batchInFlight + (query.isEmpty() ? "" : "&" + query);
        }
        if (awaitMode != null) {
            endpoint = "/compute";
            query = "await=" + awaitMode.id();
        }
        DemoServer.Options options = new DemoServer.Options("127.0.0.1", 0, timeout, Duration.ofSeconds(60), loops, stuckAfter);
        try (DemoServer server = DemoServer.start(device, options)) {
            printHeader(server, discovery);
            if (awaitMode != null) {
                out.println("  compute   " + device.computeDescription());
            }
            out.println("  load      " + Units.duration(load.toNanos())
                    + (warmup.isZero() ? " (no warm-up), " : " after a " + Units.duration(warmup.toNanos()) + " warm-up, ") + concurrency + " requests in flight, GET " + endpoint + (query.isEmpty() ? "" : "?" + query)
                    + ", reactor-netty HttpClient over loopback");
            out.println();
            LoadRunner.Result r = new LoadRunner(server, new LoadRunner.Options(load, warmup, concurrency, query, mode, endpoint), out).run();
            int pendingAfter = awaitNoPending(server);
            out.println();
            printSummary(server, r, pendingAfter);
            return r.ok() > 0 && pendingAfter == 0 && r.checks().failures() == 0 ? 0 : 1;
        }
    }

    /** Waits (bounded) for the engine to drain after the load: answers already sent may still be unwinding. */
    private static int awaitNoPending(DemoServer server) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (server.engine().pendingWaits() > 0 && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
        }
        return server.engine().pendingWaits();
    }

    private void printHeader(DemoServer server, Devices.Discovery discovery) {
        out.println("gpusync demo — " + Runtime.version().feature() + " JVM " + Runtime.version());
        out.println("  backend   " + server.device().backend() + ": " + server.device().description());
        for (String note : discovery.notes()) {
            out.println("  skipped   " + note);
        }
        out.println("  signals   " + SignalChaining.describe());
        out.println("  server    " + server.baseUrl() + " on " + server.loopThreads() + " event loops; gpusync engine "
                + (server.sharesServerLoops() ? "on the same loops" : "on its own loops (the server's are not Netty 4.2 native epoll loops)"));
    }

    private void printSummary(DemoServer server, LoadRunner.Result r, int pendingAfter) throws Exception {
        Histogram l = r.latency();
        Histogram g = r.gpuWait();
        out.printf(Locale.ROOT, "  requests  %s answered 200, %s timed out (504), %s other statuses, %s without answer  →  %,.0f req/s%n",
                Units.count(r.ok()), Units.count(r.timeouts()), Units.count(r.otherStatus()), Units.count(r.clientErrors()),
                r.throughput());
        if (batch != null) {
            out.printf(Locale.ROOT, "  units     %s done in 200 answers (NDJSON lines of /batch)  →  %,.0f units/s%n",
                    Units.count(r.units()), r.unitThroughput());
        }
        if (r.lastError() != null) {
            out.println("  last client error: " + r.lastError());
        }
        if (r.checks().checked() > 0) {
            out.printf(Locale.ROOT, "  checksums %s checked against the CPU, %s wrong or missing%s%n", Units.count(r.checks().checked()),
                    Units.count(r.checks().failures()), r.checks().failures() > 0 ? "  →  FAILED" : "");
        }
        if (l.getTotalCount() > 0) {
            out.println("  latency   " + percentiles(l, 1) + "   (client: request sent → answer read)");
        }
        if (g.getTotalCount() > 0) {
            out.println("  GPU wait  " + percentiles(g, 1000) + "   (server: work submitted → SyncPoint signalled → Mono done)");
        }
        MeterRegistry reg = server.registry();
        out.printf(Locale.ROOT, "  engine    wait path %s; waits completed %s, timed out %s, cancelled %s, failed %s; pending now %d%n",
                server.waitPath() == null ? "-" : server.waitPath(), Units.count(outcome(reg, "completed")),
                Units.count(outcome(reg, "timeout")), Units.count(outcome(reg, "cancelled")),
                Units.count(outcome(reg, "failed")), pendingAfter);
        long wakes = 0;
        double wakeNanos = 0;
        double wakeMax = 0;
        for (Timer t : reg.find("gpusync.wake.latency").timers()) {
            wakes += t.count();
            wakeNanos += t.totalTime(TimeUnit.NANOSECONDS);
            wakeMax = Math.max(wakeMax, t.max(TimeUnit.NANOSECONDS));
        }
        if (wakes > 0) {
            out.println("  wake-up   signal seen → subscriber completed: mean " + Units.duration(Math.round(wakeNanos / wakes))
                    + ", max " + Units.duration(Math.round(wakeMax)) + " (gpusync.wake.latency: the engine's hand-off to the connection's event loop)");
        }
        if (r.cpu() != null && r.ok() > 0) {
            double seconds = r.elapsedNanos() / 1e9;
            StringBuilder cpu = new StringBuilder(String.format(Locale.ROOT,
                    "  CPU       process %.2f cores of %d (%s per answered request):", r.cpu().processNanos() / 1e9 / seconds,
                    Runtime.getRuntime().availableProcessors(), Units.duration(r.cpu().processNanos() / r.ok())));
            for (var e : r.cpu().byGroup().entrySet()) {
                cpu.append(String.format(Locale.ROOT, "%n            %-62s %.2f cores, %s per request", e.getKey().label,
                        e.getValue() / 1e9 / seconds, Units.duration(e.getValue() / r.ok())));
            }
            out.println(cpu);
        }
        if (l.getTotalCount() > 0) {
            if (ModuleLayer.boot().findModule("java.desktop").isEmpty()) {
                out.println("  plot      skipped: this Java runtime has no java.desktop module (JFreeChart needs AWT)");
                return;
            }
            Path plot = plotPath();
            LatencyPlot.write(plot, "gpusync demo — " + server.device().backend() + ", concurrency " + concurrency
                            + ", " + Units.count(r.ok()) + " requests",
                    new String[]{"client: request → answer", "server: submit → GPU done → Mono complete"},
                    new Histogram[]{l, g}, new long[]{1, 1000});
            out.println("  plot      " + plot.toAbsolutePath().normalize() + " (latency CDF)");
        }
    }

    /** {@code --plot}, a relative one resolved against {@value #OUTPUT_DIR} when that is set. */
    Path plotPath() {
        String dir = System.getProperty(OUTPUT_DIR);
        return plot.isAbsolute() || dir == null || dir.isBlank() ? plot : Path.of(dir).resolve(plot);
    }

    private static long outcome(MeterRegistry reg, String outcome) {
        return Math.round(reg.find("gpusync.waits").tag("outcome", outcome).counters().stream()
                .mapToDouble(Counter::count).sum());
    }

    private static String percentiles(Histogram h, long unitNanos) {
        StringBuilder sb = new StringBuilder();
        for (double p : new double[]{50, 90, 99, 99.9}) {
            sb.append('p').append(Units.number(p)).append(' ').append(Units.duration(h.getValueAtPercentile(p) * unitNanos)).append("  ");
        }
        return sb.append("max ").append(Units.duration(h.getMaxValue() * unitNanos)).toString();
    }
}
