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
    void badArgumentsAreAUsageError() {
        assertThat(new CommandLine(new DemoMain()).execute("--load", "soon")).isEqualTo(2);
    }
}
