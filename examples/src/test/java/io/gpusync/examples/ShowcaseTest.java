package io.gpusync.examples;

import io.gpusync.SyncPoint;
import io.gpusync.examples.device.Computation;
import io.gpusync.examples.device.Device;
import io.gpusync.examples.device.DeviceOptions;
import io.gpusync.examples.device.Devices;
import io.gpusync.examples.device.KernelModel;
import io.gpusync.examples.device.SimulatedDevice;
import io.gpusync.examples.device.Work;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;
import reactor.core.publisher.Flux;
import reactor.netty.http.client.HttpClient;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The real-work showcase on the simulated device: every await mode answers {@code /compute} with a checksum the load
 * client checks, a wrong checksum fails the run, and the one-command run writes its table, CSV and plot.
 */
class ShowcaseTest {
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
    }

    private DemoServer start(Device device) {
        toClose.add(device);
        DemoServer server = DemoServer.start(device, DemoServer.Options.loopback().withDefaultTimeout(Duration.ofSeconds(30)));
        toClose.add(server);
        return server;
    }

    private LoadRunner.Result load(DemoServer server, AwaitMode mode, int inFlight) {
        return new LoadRunner(server, new LoadRunner.Options(Duration.ofMillis(800), Duration.ZERO, inFlight,
                "await=" + mode.id(), LoadRunner.Progress.OFF, "/compute"), quiet).run();
    }

    @Test
    void everyAwaitModeAnswersWithChecksumsThatTheClientVerifies() {
        DemoServer server = start(new SimulatedDevice(KernelModel.fixed(Duration.ofMillis(1)), 4));
        for (AwaitMode mode : AwaitMode.values()) {
            LoadRunner.Result r = load(server, mode, 8);
            assertThat(r.ok()).as(mode.id()).isPositive();
            assertThat(r.checks().checked()).as(mode.id()).isEqualTo(r.ok());
            assertThat(r.checks().failures()).as(mode.id()).isZero();
            assertThat(r.threads().platformPeak()).as(mode.id()).isPositive();
            if (mode != AwaitMode.GPUSYNC) { // a blocked thread per wait in flight, up to their caps
                assertThat(r.threads().awaitThreads(mode)).as("%s: threads that await", mode.id()).isPositive();
            }
            if (mode == AwaitMode.VIRTUAL_THREADS) {
                assertThat(r.threads().virtualPeak()).as("virtual threads blocked at once").isBetween(1, 8);
            } else {
                assertThat(r.threads().virtualPeak()).as(mode.id()).isZero();
            }
        }
    }

    @Test
    void aWrongChecksumIsCountedAndFailsTheReport() {
        DemoServer server = start(new OffByOne(new SimulatedDevice(KernelModel.fixed(Duration.ofMillis(1)), 2)));
        LoadRunner.Result r = load(server, AwaitMode.GPUSYNC, 4);
        assertThat(r.ok()).isPositive();
        assertThat(r.checks().failures()).isEqualTo(r.ok());
        ShowcaseReport report = new ShowcaseReport("cpu", "off by one", false,
                List.of(ShowcaseReport.Row.of(AwaitMode.GPUSYNC, 4, r)));
        assertThat(report.failures()).singleElement().asString().contains("checksums differ from the CPU's");
    }

    @Test
    void oneCommandRunsEveryModeAtEveryLevelAndWritesTableCsvAndPlot(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(ModuleLayer.boot().findModule("java.desktop").isPresent(),
                "this Java runtime has no java.desktop (a jlinked one): no plot");
        PrintStream stdout = System.out;
        int code;
        System.setOut(quiet);
        try {
            code = new CommandLine(new Showcase()).execute("--backend", "cpu", "--in-flight", "4,16", "--warmup", "0s",
                    "--measure", "700ms", "--prewarm", "300ms", "--out", dir.toString());
        } finally {
            System.setOut(stdout);
        }
        assertThat(code).isZero();
        List<String> csv = Files.readAllLines(dir.resolve("showcase.csv"));
        assertThat(csv).hasSize(1 + 3 * 2);
        assertThat(csv.getFirst()).startsWith("await,in_flight,req_per_s");
        assertThat(csv.subList(1, csv.size())).extracting(l -> l.substring(0, l.indexOf(',', l.indexOf(',') + 1)))
                .containsExactly("gpusync,4", "gpusync,16", "virtual-threads,4", "virtual-threads,16",
                        "elastic-blocking,4", "elastic-blocking,16");
        assertThat(csv.subList(1, csv.size())).allMatch(l -> l.endsWith(",0"), "no checksum failure");
        assertThat(Files.readString(dir.resolve("showcase.md"))).contains("| gpusync | 4 |").contains("| elastic-blocking | 16 |");
        byte[] png = Files.readAllBytes(dir.resolve("showcase.png"));
        assertThat(png).startsWith(0x89, 'P', 'N', 'G');
    }

    /**
     * Each real backend here answers {@code /compute} in every mode with checksums the CPU agrees with; on CUDA (the
     * H200 suite) that is the real copy-in, kernel, copy-out, checked once more at start by the device's own timing run.
     */
    @ParameterizedTest
    @ValueSource(strings = {"opencl", "vulkan", "cuda", "d3d12"})
    void everyAwaitModeOnEachAvailableRealBackend(String backend) {
        Device device;
        try {
            device = Devices.open(backend, new DeviceOptions(KernelModel.DEFAULT, 4, false, 0,
                    DeviceOptions.CudaPoint.TIMELINE, new DeviceOptions.ComputeSizing(Duration.ofNanos(200_000), 0, 64))).device();
        } catch (IllegalStateException notHere) {
            Assumptions.abort(notHere.getMessage());
            return;
        }
        DemoServer server = start(device);
        ChecksumCheck check = new ChecksumCheck();
        HttpClient client = HttpClient.create().baseUrl(server.baseUrl());
        for (AwaitMode mode : AwaitMode.values()) {
            List<String> bodies = Flux.range(0, 24)
                    .flatMap(i -> client.get().uri("/compute?await=" + mode.id() + "&seed=" + i)
                            .responseSingle((res, body) -> body.asString().map(b -> res.status().code() + " " + b)), 12)
                    .collectList().block(Duration.ofSeconds(60));
            assertThat(bodies).as("%s on %s", mode.id(), backend).hasSize(24).allSatisfy(b -> {
                assertThat(b).startsWith("200 ").contains("\"onDevice\":" + device.computesOnDevice());
                assertThat(check.matches(b.substring(4))).as("checksum of %s", b).isTrue();
            });
        }
        assertThat(device.computesOnDevice()).isEqualTo(backend.equals("cuda"));
    }

    @Test
    void awaitModesAreNamedAsOnTheCommandLine() {
        assertThat(AwaitMode.named("Elastic-Blocking")).isEqualTo(AwaitMode.ELASTIC_BLOCKING);
        assertThat(AwaitMode.named("virtual-threads")).isEqualTo(AwaitMode.VIRTUAL_THREADS);
        assertThatThrownBy(() -> AwaitMode.named("threads")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("gpusync, elastic-blocking or virtual-threads");
    }

    /** A device whose every checksum is one off: what a broken kernel or a reused buffer would answer. */
    private record OffByOne(Device device) implements Device {
        @Override
        public String backend() {
            return device.backend();
        }

        @Override
        public String description() {
            return "off by one";
        }

        @Override
        public SyncPoint submit(Work work) {
            return device.submit(work);
        }

        @Override
        public Computation compute(long seed, boolean forBlockingWait) {
            Computation c = device.compute(seed, forBlockingWait);
            return new Computation() {
                @Override
                public long seed() {
                    return c.seed();
                }

                @Override
                public int rounds() {
                    return c.rounds();
                }

                @Override
                public SyncPoint point() {
                    return c.point();
                }

                @Override
                public int checksum() {
                    return c.checksum() + 1;
                }

                @Override
                public void release(boolean waitFinished) {
                    c.release(waitFinished);
                }
            };
        }

        @Override
        public OptionalLong oldestUnfinishedSubmission() {
            return device.oldestUnfinishedSubmission();
        }

        @Override
        public void close() {
            device.close();
        }
    }
}
