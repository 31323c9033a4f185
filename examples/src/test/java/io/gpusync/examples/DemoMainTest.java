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
    }
}
