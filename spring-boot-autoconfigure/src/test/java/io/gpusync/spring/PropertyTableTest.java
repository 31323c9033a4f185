package io.gpusync.spring;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README's Spring Boot property table is the configuration metadata Spring Boot generates from
 * {@link GpuSyncProperties} (and the additional metadata), word for word; a bad value names its property.
 */
class PropertyTableTest {
    private final ApplicationContextRunner plain = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GpuSyncAutoConfiguration.class));

    @Test
    void theReadmeTableHasEveryPropertyWithItsDefaultAndItsMetadataDescription() throws IOException {
        Map<String, List<String>> metadata = new TreeMap<>();
        try (InputStream in = Objects.requireNonNull(getClass().getResourceAsStream(
                "/META-INF/spring-configuration-metadata.json"), "the generated configuration metadata")) {
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            List<Map<String, Object>> properties = JsonPath.read(json, "$.properties[*]");
            for (Map<String, Object> p : properties) {
                metadata.put((String) p.get("name"), List.of(String.valueOf(p.get("defaultValue")),
                        ((String) p.get("description")).replaceAll("\\s+", " ")));
            }
        }
        assertThat(metadata).containsKeys("gpusync.spin-budget", "gpusync.health.device-lost-window",
                "management.health.gpusync.enabled");

        assertThat(readmeTable()).isEqualTo(metadata);
    }

    @Test
    void aNegativeSpinBudgetFailsTheStartupNamingTheProperty() {
        plain.withPropertyValues("gpusync.spin-budget=-1ms").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("gpusync.spin-budget must not be negative");
        });
    }

    @Test
    void aNegativeDeviceLostWindowFailsTheStartupNamingTheProperty() {
        plain.withPropertyValues("gpusync.health.device-lost-window=-1s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("gpusync.health.device-lost-window must not be negative");
        });
    }

    /** README's "| `property` | `default` | meaning |" rows of the Spring Boot section: name → [default, meaning]. */
    static Map<String, List<String>> readmeTable() throws IOException {
        String readme = Files.readString(projectRoot().resolve("README.md"));
        String section = readme.substring(readme.indexOf("## Spring Boot\n"), readme.indexOf("## Sync points\n"));
        Map<String, List<String>> rows = new TreeMap<>();
        for (String line : section.lines().toList()) {
            if (line.startsWith("| `")) {
                String[] cells = line.split("\\|");
                rows.put(unquote(cells[1]), List.of(unquote(cells[2]), cells[3].strip()));
            }
        }
        return rows;
    }

    private static String unquote(String cell) {
        return cell.strip().replace("`", "");
    }

    private static Path projectRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("README.md"))
                    && Files.isDirectory(dir.resolve("spring-boot-autoconfigure"))) {
                return dir;
            }
        }
        throw new AssertionError("no checkout above " + Path.of("").toAbsolutePath());
    }
}
