package io.gpusync.examples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's demo, shortened: load mode runs, answers, drains and writes its plot. */
class DemoMainTest {

    @Test
    void loadModeRunsAndWritesAPlot(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(ModuleLayer.boot().findModule("java.desktop").isPresent(),
                "this Java runtime has no java.desktop (a jlinked one): the demo skips its plot, saying so");
        Path plot = dir.resolve("latency.png");
        int code = new CommandLine(new DemoMain()).execute("--load", "1s", "--warmup", "0s", "--concurrency", "16",
                "--progress", "off", "--backend", "cpu", "--plot", plot.toString());
        assertThat(code).isZero(); // 0 = some requests answered 200 and no wait was left pending
        assertThat(Files.size(plot)).isPositive();
        byte[] magic = new byte[8];
        try (var in = Files.newInputStream(plot)) {
            assertThat(in.read(magic)).isEqualTo(8);
        }
        assertThat(magic).startsWith(0x89, 'P', 'N', 'G');
    }

    @Test
    void loadModeCanDriveTheBatchEndpoint(@TempDir Path dir) {
        org.junit.jupiter.api.Assumptions.assumeTrue(ModuleLayer.boot().findModule("java.desktop").isPresent(),
                "this Java runtime has no java.desktop (a jlinked one): the demo skips its plot, saying so");
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        java.io.PrintStream stdout = System.out;
        int code;
        System.setOut(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            code = new CommandLine(new DemoMain()).execute("--load", "1s", "--warmup", "0s", "--concurrency", "4",
                    "--batch", "200", "--batch-in-flight", "32", "--progress", "off", "--backend", "cpu",
                    "--plot", dir.resolve("latency.png").toString());
        } finally {
            System.setOut(stdout);
        }
        String printed = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(code).as(printed).isZero();
        assertThat(printed).contains("GET /batch?n=200&inFlight=32").containsPattern("units +[0-9.,kM]+ done");
    }

    @Test
    void badArgumentsAreAUsageError() {
        assertThat(new CommandLine(new DemoMain()).execute("--load", "soon")).isEqualTo(2);
        assertThat(new CommandLine(new DemoMain()).execute("--load", "1s", "--batch", "0")).isEqualTo(2);
        assertThat(new CommandLine(new DemoMain()).execute("--load", "1s", "--work-ms", "10001")).isEqualTo(2);
        assertThat(new CommandLine(new DemoMain()).execute("--stuck-after", "0s")).isEqualTo(2);
        assertThat(new CommandLine(new DemoMain()).execute("--load", "1s", "--streams", "-1")).isEqualTo(2);
        assertThat(new CommandLine(new DemoMain()).execute("--load", "1s", "--streams", "129")).isEqualTo(2);
    }

    @Test
    void aRelativePlotPathLandsInTheDemosOutputDirectory(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(ModuleLayer.boot().findModule("java.desktop").isPresent(),
                "this Java runtime has no java.desktop (a jlinked one): the demo skips its plot, saying so");
        String before = System.getProperty(DemoMain.OUTPUT_DIR);
        System.setProperty(DemoMain.OUTPUT_DIR, dir.toString()); // what the demo's exec sets: examples/target
        int code;
        try {
            code = new CommandLine(new DemoMain()).execute("--load", "500ms", "--warmup", "0s", "--concurrency", "4",
                    "--progress", "off", "--backend", "cpu", "--plot", "custom-name.png");
        } finally {
            if (before == null) {
                System.clearProperty(DemoMain.OUTPUT_DIR);
            } else {
                System.setProperty(DemoMain.OUTPUT_DIR, before);
            }
        }
        assertThat(code).isZero();
        assertThat(dir.resolve("custom-name.png")).isNotEmptyFile();
        assertThat(Path.of("custom-name.png")).doesNotExist();
    }

    @Test
    void serveModeExitsCleanlyOnSigterm() throws Exception {
        Process demo = startServeMode();
        try {
            String header = readUntil(demo, "stop      Ctrl-C");
            assertThat(header).contains("server    http://127.0.0.1:");
            // the test JVM runs with libjsig preloaded (the build does it) and the child inherits LD_PRELOAD
            assertThat(header).contains(SignalChaining.preloaded() ? "libjsig preloaded" : "libjsig not preloaded");

            demo.toHandle().destroy(); // SIGTERM (Process.destroy would also close our ends of its pipes)
            assertThat(demo.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).as("the demo stops").isTrue();

            String rest = new String(demo.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            String errors = new String(demo.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(rest).contains("gpusync demo: stopping (server, engine, device)").contains("gpusync demo: stopped");
            assertThat(errors).as("stderr").doesNotContain("Exception").doesNotContain("Error");
            // 128 + SIGTERM, as for any JVM stopped by a signal: the demo's exec counts 143 (and 130) as success
            assertThat(demo.exitValue()).isEqualTo(143);
        } finally {
            demo.destroyForcibly();
        }
    }

    /** The demo in serve mode in a child JVM like the one the demo's exec starts (ephemeral port, CPU device). */
    private static Process startServeMode() throws java.io.IOException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        return new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Djava.awt.headless=true",
                "-cp", classPath, DemoMain.class.getName(), "--backend", "cpu", "--port", "0")
                .start();
    }

    /** Reads the process's stdout up to and including the line that contains {@code marker}. */
    private static String readUntil(Process process, String marker) throws java.io.IOException {
        StringBuilder read = new StringBuilder();
        java.io.InputStream in = process.getInputStream();
        int c;
        while ((c = in.read()) != -1) {
            read.append((char) c);
            if (c == '\n' && read.toString().contains(marker)) {
                return read.toString();
            }
        }
        throw new AssertionError("the demo ended before printing '" + marker + "': " + read);
    }
}
