package io.gpusync.examples;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Module names match artifact ids through one documented mapping: README's table ({@code | artifact | module |
 * what it is |}) lists every artifact the BOM publishes with a module, and each row names the module that the
 * artifact's {@code module-info.java} declares (or, for an automatic module, its {@code Automatic-Module-Name}).
 */
class ModuleTableTest {
    private static final Pattern ROW = Pattern.compile("^\\| `([\\w-]+)` \\| `([\\w.]+)` \\|");
    private static final Pattern ARTIFACT = Pattern.compile("</parent>\\s*<artifactId>([\\w-]+)</artifactId>");
    private static final Pattern MODULE = Pattern.compile("(?m)^\\s*(?:open\\s+)?module\\s+([\\w.]+)\\s*\\{");
    private static final Pattern AUTOMATIC = Pattern.compile("<Automatic-Module-Name>([\\w.]+)</Automatic-Module-Name>");
    private static final Pattern BOM_ENTRY = Pattern.compile("<artifactId>(gpusync-[\\w-]+)</artifactId>");

    @Test
    void readmesModuleTableMatchesTheModuleDescriptorsAndCoversEveryPublishedJar() throws IOException {
        Path root = root();
        Map<String, String> table = new LinkedHashMap<>();
        boolean inTable = false;
        for (String line : Files.readAllLines(root.resolve("README.md"))) {
            if (line.startsWith("| artifact | module |")) {
                inTable = true;
            } else if (inTable && !line.startsWith("|")) {
                break;
            } else if (inTable) {
                Matcher m = ROW.matcher(line);
                if (m.find()) {
                    table.put(m.group(1), m.group(2));
                }
            }
        }
        assertThat(table).as("README.md's module table").isNotEmpty();

        Map<String, String> actual = new LinkedHashMap<>(); // artifact id -> module name, from the build itself
        try (Stream<Path> dirs = Files.walk(root, 2)) { // top-level modules and bindings/*, backends/*
            for (Path dir : dirs.filter(d -> !d.equals(root) && Files.isRegularFile(d.resolve("pom.xml")))
                    .filter(d -> !root.relativize(d).toString().contains("target")).sorted().toList()) {
                Matcher artifact = ARTIFACT.matcher(Files.readString(dir.resolve("pom.xml")));
                if (artifact.find()) {
                    moduleName(dir).ifPresent(module -> actual.put(artifact.group(1), module));
                }
            }
        }
        table.forEach((artifact, module) -> assertThat(actual.get(artifact))
                .as("README says %s is module %s", artifact, module).isEqualTo(module));

        Matcher published = BOM_ENTRY.matcher(Files.readString(root.resolve("bom/pom.xml")));
        while (published.find()) {
            String artifact = published.group(1);
            if (actual.containsKey(artifact)) {
                assertThat(table).as("README's module table lists %s (in the BOM)", artifact)
                        .containsEntry(artifact, actual.get(artifact));
            }
        }
    }

    /** The module a build module declares: its module-info.java, or its jar's Automatic-Module-Name. */
    private static Optional<String> moduleName(Path dir) throws IOException {
        Path info = dir.resolve("src/main/java/module-info.java");
        if (Files.isRegularFile(info)) {
            Matcher m = MODULE.matcher(Files.readString(info));
            assertThat(m.find()).as("a module declaration in %s", info).isTrue();
            return Optional.of(m.group(1));
        }
        Matcher automatic = AUTOMATIC.matcher(Files.readString(dir.resolve("pom.xml")));
        return automatic.find() ? Optional.of(automatic.group(1)) : Optional.empty();
    }

    /** The checkout's root: the module directory's parent under Maven, the working directory elsewhere. */
    private static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("bom"))) {
                return dir;
            }
        }
        return Path.of("..");
    }
}
