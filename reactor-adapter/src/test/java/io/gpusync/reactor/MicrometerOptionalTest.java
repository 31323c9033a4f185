package io.gpusync.reactor;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Micrometer is optional (its meters and its observations): an engine built without a registry, and the default
 * engine, wait with no Micrometer jar on the class path — no observation class is loaded on the way. A child JVM
 * runs {@link MicrometerOptionalProbe} on this test's class path minus every {@code micrometer-*} jar.
 */
class MicrometerOptionalTest {

    @Test
    void withoutMicrometerOnTheClassPathEnginesWait() throws Exception {
        String testClassPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> entries = Arrays.stream(testClassPath.split(File.pathSeparator))
                .filter(e -> !Path.of(e).getFileName().toString().matches("(.*\\.)?micrometer-.*")).toList();
        assertThat(entries).as("the test class path").anyMatch(e -> e.contains("reactor-core"))
                .hasSizeLessThan(testClassPath.split(File.pathSeparator).length);

        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xshare:auto", "-cp", String.join(File.pathSeparator, entries),
                MicrometerOptionalProbe.class.getName()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(output).isTrue();

        assertThat(p.exitValue()).as(output).isZero();
        assertThat(output).contains("micrometer: (none)", "plain: CALLBACK completed", "default: CALLBACK completed",
                "done").doesNotContain("NoClassDefFoundError");
    }
}
