package io.gpusync;

import io.gpusync.testsuite.Checkout;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README's "Modules" table names, for each artifact, the packages its module exports to everyone (the
 * application-visible API); that column matches the module descriptors the build compiled: the unqualified exports
 * of {@code target/classes/module-info.class} of each module. A module built after this one (the engine, the
 * programs) is read from its {@code module-info.java} when its classes are not there yet. Automatic modules (no
 * descriptor) must say "—".
 */
class ReadmeModulesTest {
    private static final Pattern ROW = Pattern.compile("^\\| `([\\w-]+)` \\| `([\\w.]+)` \\| .* \\| ([^|]+) \\|$");
    private static final Pattern ARTIFACT = Pattern.compile("</parent>\\s*<artifactId>([\\w-]+)</artifactId>");
    private static final Pattern SOURCE_EXPORT = Pattern.compile("(?m)^\\s*exports\\s+([\\w.]+)\\s*;");

    @Test
    void theReadmesExportedPackagesAreTheModulesUnqualifiedExports() throws IOException {
        Path root = Checkout.root();
        Map<String, Set<String>> readme = new LinkedHashMap<>();
        boolean inTable = false;
        for (String line : Files.readAllLines(root.resolve("README.md"))) {
            if (line.startsWith("| artifact | module | what it is | application-visible exported packages |")) {
                inTable = true;
            } else if (inTable && !line.startsWith("|")) {
                break;
            } else if (inTable) {
                Matcher m = ROW.matcher(line);
                if (m.find()) {
                    Set<String> packages = new TreeSet<>();
                    Matcher pkg = Pattern.compile("`([\\w.]+)`").matcher(m.group(3));
                    while (pkg.find()) {
                        packages.add(pkg.group(1));
                    }
                    readme.put(m.group(1), packages);
                }
            }
        }
        assertThat(readme).as("README.md's Modules table").hasSizeGreaterThanOrEqualTo(20);

        Map<String, Path> modules = new LinkedHashMap<>(); // artifact id -> module directory
        try (Stream<Path> dirs = Files.walk(root, 2)) {
            for (Path dir : dirs.filter(d -> !d.equals(root) && Files.isRegularFile(d.resolve("pom.xml"))).toList()) {
                Matcher artifact = ARTIFACT.matcher(Files.readString(dir.resolve("pom.xml")));
                if (artifact.find()) {
                    modules.put(artifact.group(1), dir);
                }
            }
        }
        for (Map.Entry<String, Set<String>> row : readme.entrySet()) {
            Path dir = modules.get(row.getKey());
            assertThat(dir).as("a build module for README's %s", row.getKey()).isNotNull();
            assertThat(exported(dir)).as("what %s exports to everyone", row.getKey()).isEqualTo(row.getValue());
        }
    }

    private static Set<String> exported(Path module) throws IOException {
        Path compiled = module.resolve("target/classes/module-info.class");
        if (Files.isRegularFile(compiled)) {
            try (InputStream in = Files.newInputStream(compiled)) {
                return ModuleDescriptor.read(in).exports().stream().filter(e -> !e.isQualified())
                        .map(ModuleDescriptor.Exports::source).collect(Collectors.toCollection(TreeSet::new));
            }
        }
        Path source = module.resolve("src/main/java/module-info.java");
        Set<String> exported = new TreeSet<>();
        if (Files.isRegularFile(source)) {
            Matcher m = SOURCE_EXPORT.matcher(Files.readString(source));
            while (m.find()) {
                exported.add(m.group(1));
            }
        }
        return exported;
    }
}
