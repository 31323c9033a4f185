package io.gpusync.reactor;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** README's "Metrics and health" names exactly the meters that {@link GpuSyncMetrics} registers, no more, no less. */
class ReadmeMetersTest {

    @Test
    void theReadmeNamesExactlyTheMetersAnEngineRegisters() throws IOException {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SyncEngine engine = GpuSync.builder().name("readme-meters").build();
        try {
            new GpuSyncMetrics(engine).withHistograms().bindTo(registry);
            Set<String> registered = registry.getMeters().stream().map(m -> m.getId().getName())
                    .collect(Collectors.toCollection(TreeSet::new));
            assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTag("engine"))
                    .isEqualTo("readme-meters"));

            assertThat(readmeMeterNames()).isEqualTo(registered);
        } finally {
            engine.dispose();
        }
    }

    /** The {@code `gpusync.…`} names in README's paragraph that starts with "**Metrics and health.**". */
    static Set<String> readmeMeterNames() throws IOException {
        String readme = Files.readString(projectRoot().resolve("README.md"));
        int start = readme.indexOf("**Metrics and health.**");
        assertThat(start).as("README's \"Metrics and health\" paragraph").isNotNegative();
        int end = readme.indexOf("\n\n", start);
        Matcher names = Pattern.compile("`(gpusync\\.[a-z.]+)`").matcher(readme.substring(start, end));
        Set<String> found = new TreeSet<>();
        while (names.find()) {
            found.add(names.group(1));
        }
        return found;
    }

    private static Path projectRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("reactor-adapter"))) {
                return dir;
            }
        }
        throw new AssertionError("no checkout (README.md, reactor-adapter/) above " + Path.of("").toAbsolutePath());
    }
}
