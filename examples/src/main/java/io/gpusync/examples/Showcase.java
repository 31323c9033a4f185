package io.gpusync.examples;

import io.gpusync.examples.device.Device;
import io.gpusync.examples.device.DeviceOptions;
import io.gpusync.examples.device.Devices;
import io.gpusync.examples.device.KernelModel;
import io.gpusync.examples.device.Units;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The real-work showcase: one run of the demo server, loaded over loopback with {@code GET /compute} (CUDA: copy in,
 * matrix kernel, copy out; every answer's checksum checked against the CPU) once per await mode and in-flight level,
 * mode after mode (so that one mode's leftover threads are not counted in the next's), then a table (markdown and
 * CSV) and a plot of req/s and p99 against in-flight, one line per mode.
 *
 * <p>The run fails (exit 1) when a checksum is wrong or missing, or a cell answered nothing. A watchdog ends the JVM
 * (exit 3, after a thread dump) at {@code --deadline}, whatever is blocked: a baseline's native wait cannot be
 * interrupted, and a GPU that stops would hold it for ever.
 */
@Command(name = "gpusync-showcase", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"The demo's real-work showcase: gpusync against elastic-blocking and virtual-threads awaits of",
                "the same GPU work, side by side in one run."})
public final class Showcase implements Callable<Integer> {

    @Option(names = "--backend", defaultValue = "auto", description = "auto, cuda, vulkan, opencl, cpu or d3d12 (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--await", split = ",", defaultValue = "gpusync,virtual-threads,elastic-blocking",
            description = "await modes, run in this order (default: ${DEFAULT-VALUE})")
    List<String> modes;

    @Option(names = "--in-flight", split = ",", defaultValue = "256,4096",
            description = "requests in flight, one cell per level and mode (default: ${DEFAULT-VALUE})")
    List<Integer> inFlight;

    @Option(names = "--warmup", defaultValue = "3s", converter = DurationConverter.class,
            description = "uncounted warm-up of each cell (default: ${DEFAULT-VALUE})")
    Duration warmup;

    @Option(names = "--measure", defaultValue = "15s", converter = DurationConverter.class,
            description = "measured period of each cell (default: ${DEFAULT-VALUE})")
    Duration measure;

    @Option(names = "--prewarm", defaultValue = "3s", converter = DurationConverter.class,
            description = "uncounted gpusync load before the first cell, so that no cell pays for the JIT (default: ${DEFAULT-VALUE})")
    Duration prewarm;

    @Option(names = "--timeout", defaultValue = "5s", converter = DurationConverter.class,
            description = "per-request timeout (504 past it) (default: ${DEFAULT-VALUE})")
    Duration timeout;

    @Option(names = "--deadline", defaultValue = "420s", converter = DurationConverter.class,
            description = "the whole run's limit: past it the JVM dumps its threads and exits 3 (default: ${DEFAULT-VALUE})")
    Duration deadline;

    @Option(names = "--gpu-work", defaultValue = "200us", converter = DurationConverter.class,
            description = "CUDA: GPU time of one request; the kernel is timed at start to size it (default: ${DEFAULT-VALUE})")
    Duration gpuWork;

    @Option(names = "--compute-rounds", defaultValue = "0",
            description = "CUDA: matrix products per request instead of sizing them from --gpu-work (default: ${DEFAULT-VALUE})")
    int computeRounds;

    @Option(names = "--streams", defaultValue = "0", description = "CUDA: streams (default 0: sized to the GPU)")
    int streams;

    @Option(names = "--cuda-point", defaultValue = "timeline",
            description = "CUDA: the gpusync mode's point, event or timeline; the baselines always block on an event (default: ${DEFAULT-VALUE})")
    String cudaPoint;

    @Option(names = "--loops", defaultValue = "0", description = "server event loop threads, 0 = Reactor Netty's default")
    int loops;

    @Option(names = "--out", defaultValue = "showcase", description = "directory for showcase.md, .csv and .png (default: ${DEFAULT-VALUE})")
    Path outDir;

    private final PrintStream out = System.out;

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.exit(new CommandLine(new Showcase()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        List<AwaitMode> awaitModes = new ArrayList<>();
        DeviceOptions.CudaPoint point;
        try {
            modes.forEach(m -> awaitModes.add(AwaitMode.named(m)));
            point = DeviceOptions.CudaPoint.named(cudaPoint);
            if (inFlight.stream().anyMatch(n -> n < 1) || !measure.isPositive() || !deadline.isPositive()
                    || streams < 0 || streams > DeviceOptions.MAX_STREAMS || computeRounds < 0 || !gpuWork.isPositive()) {
                throw new IllegalArgumentException("need --in-flight ≥ 1, --measure, --deadline and --gpu-work > 0, "
                        + "--compute-rounds ≥ 0, --streams in [0, " + DeviceOptions.MAX_STREAMS + "]");
            }
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
        }
        AtomicReference<String> cell = new AtomicReference<>("opening the device");
        Thread watchdog = watchdog(cell);
        try {
            int maxInFlight = inFlight.stream().mapToInt(Integer::intValue).max().orElse(1);
            DeviceOptions options = new DeviceOptions(KernelModel.DEFAULT, 4, false, streams, point,
                    new DeviceOptions.ComputeSizing(gpuWork, computeRounds, maxInFlight));
            Devices.Discovery discovery = Devices.open(backend, options);
            try (Device device = discovery.device()) {
                return run(device, discovery, awaitModes, cell);
            }
        } finally {
            watchdog.interrupt();
        }
    }

    private int run(Device device, Devices.Discovery discovery, List<AwaitMode> awaitModes, AtomicReference<String> cell) throws Exception {
        out.println("gpusync showcase — JVM " + Runtime.version() + ", " + Runtime.getRuntime().availableProcessors() + " CPUs");
        out.println("  device    " + device.backend() + ": " + device.description());
        discovery.notes().forEach(n -> out.println("  skipped   " + n));
        cell.set("preparing the work (CUDA: kernel load, buffers, timing)");
        out.println("  work      " + device.computeDescription());
        out.flush();
        List<ShowcaseReport.Row> rows = new ArrayList<>();
        DemoServer.Options serverOptions = new DemoServer.Options("127.0.0.1", 0, timeout, Duration.ofSeconds(60),
                loops, DemoServer.Options.DEFAULT_STUCK_AFTER);
        try (DemoServer server = DemoServer.start(device, serverOptions)) {
            out.println("  server    " + server.baseUrl() + " on " + server.loopThreads() + " event loops");
            ChecksumCheck checksums = new ChecksumCheck();
            if (prewarm.isPositive()) {
                cell.set("the prewarm");
                int lowest = inFlight.stream().mapToInt(Integer::intValue).min().orElse(1);
                out.println("  prewarm   " + Units.duration(prewarm.toNanos()) + " of gpusync at " + lowest + " in flight, not counted");
                out.flush();
                LoadRunner.Result r = new LoadRunner(server, new LoadRunner.Options(prewarm, Duration.ZERO, lowest,
                        "await=gpusync&timeoutMs=" + timeout.toMillis(), LoadRunner.Progress.OFF, "/compute"), out, checksums).run();
                if (r.checks().failures() > 0) {
                    out.println("FAILED: " + r.checks().failures() + " of " + r.checks().checked()
                            + " checksums in the prewarm differ from the CPU's");
                    return 1;
                }
                settle(server);
            }
            for (AwaitMode mode : awaitModes) {
                for (int n : inFlight) {
                    cell.set(mode.id() + " at " + n + " in flight");
                    out.println();
                    out.println("== " + cell.get() + ": " + Units.duration(warmup.toNanos()) + " warm-up, "
                            + Units.duration(measure.toNanos()) + " measured");
                    out.flush();
                    LoadRunner.Result r = new LoadRunner(server, new LoadRunner.Options(measure, warmup, n,
                            "await=" + mode.id() + "&timeoutMs=" + timeout.toMillis(), LoadRunner.Progress.LINES,
                            "/compute"), out, checksums).run();
                    ShowcaseReport.Row row = ShowcaseReport.Row.of(mode, n, r);
                    rows.add(row);
                    out.println("   " + row.summary());
                    settle(server);
                }
            }
        }
        ShowcaseReport report = new ShowcaseReport(device.backend() + ": " + device.description(),
                device.computeDescription(), device.computesOnDevice(), rows);
        out.println();
        out.print(report.markdown());
        for (Path p : report.write(outDir)) {
            out.println("  wrote     " + p.toAbsolutePath().normalize());
        }
        List<String> failures = report.failures();
        failures.forEach(f -> out.println("FAILED: " + f));
        out.flush();
        return failures.isEmpty() ? 0 : 1;
    }

    /** Between cells: lets the engine drain and the last cell's answers unwind (bounded). */
    private static void settle(DemoServer server) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (server.engine().pendingWaits() > 0 && System.nanoTime() - end < 0) {
            Thread.sleep(10);
        }
        Thread.sleep(200);
    }

    /** A daemon that, at the deadline, says which cell was running, dumps the threads and halts the JVM. */
    private Thread watchdog(AtomicReference<String> cell) {
        long until = System.nanoTime() + deadline.toNanos();
        Thread t = new Thread(() -> {
            try {
                TimeUnit.NANOSECONDS.sleep(Math.max(0, until - System.nanoTime()));
            } catch (InterruptedException done) {
                return;
            }
            PrintStream err = System.err;
            err.println("gpusync showcase: FAILED: the run passed its deadline (" + Units.duration(deadline.toNanos())
                    + ", --deadline) while " + cell.get() + "; threads:");
            for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                err.println("\"" + e.getKey().getName() + "\" " + e.getKey().getState());
                StackTraceElement[] st = e.getValue();
                for (int i = 0; i < Math.min(st.length, 12); i++) {
                    err.println("    at " + st[i]);
                }
            }
            err.flush();
            System.out.flush();
            Runtime.getRuntime().halt(3);
        }, "gpusync-showcase-watchdog");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
