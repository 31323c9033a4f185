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
 * artifact's {@code module-info.java} declares (or, for an automatic module, its {@code Automatic-Module-Name}), and
 * the packages it exports to every module (qualified exports, such as core's internal package to the engine, are not
 * for applications and are not listed).
 */
class ModuleTableTest {
    private static final Pattern ROW = Pattern.compile("^\\| `([\\w-]+)` \\| `([\\w.]+)` \\|");
    private static final Pattern ARTIFACT = Pattern.compile("</parent>\\s*<artifactId>([\\w-]+)</artifactId>");
    private static final Pattern MODULE = Pattern.compile("(?m)^\\s*(?:open\\s+)?module\\s+([\\w.]+)\\s*\\{");
    private static final Pattern AUTOMATIC = Pattern.compile("<Automatic-Module-Name>([\\w.]+)</Automatic-Module-Name>");
    private static final Pattern EXPORTS = Pattern.compile("(?m)^\\s*exports\\s+([\\w.]+)\\s*;");
    private static final Pattern PACKAGE = Pattern.compile("`([\\w.]+)`");
    private static final Pattern BOM_ENTRY = Pattern.compile("<artifactId>(gpusync-[\\w-]+)</artifactId>");

    @Test
    void readmesModuleTableMatchesTheModuleDescriptorsAndTheirExportsAndCoversEveryPublishedJar() throws IOException {
        Path root = root();
        Map<String, String> table = new LinkedHashMap<>();
        Map<String, java.util.Set<String>> exported = new LinkedHashMap<>(); // artifact -> README's exported packages
        Map<String, Path> moduleDir = new LinkedHashMap<>();
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
                    String[] cells = line.split(" \\| ");
                    java.util.Set<String> packages = new java.util.TreeSet<>();
                    Matcher p = PACKAGE.matcher(cells[cells.length - 1].replaceAll("\\(.*", ""));
                    while (p.find()) {
                        packages.add(p.group(1));
                    }
                    exported.put(m.group(1), packages);
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
                    moduleDir.put(artifact.group(1), dir);
                }
            }
        }
        table.forEach((artifact, module) -> assertThat(actual.get(artifact))
                .as("README says %s is module %s", artifact, module).isEqualTo(module));
        exported.forEach((artifact, packages) -> {
            Path info = moduleDir.get(artifact).resolve("src/main/java/module-info.java");
            if (Files.isRegularFile(info)) { // an automatic module exports every package it has
                java.util.Set<String> declared = new java.util.TreeSet<>();
                Matcher e = EXPORTS.matcher(readUnchecked(info));
                while (e.find()) {
                    declared.add(e.group(1));
                }
                assertThat(packages).as("README's exported packages of %s: its unqualified exports", artifact)
                        .containsExactlyInAnyOrderElementsOf(declared);
            }
        });

        Matcher published = BOM_ENTRY.matcher(Files.readString(root.resolve("bom/pom.xml")));
        while (published.find()) {
            String artifact = published.group(1);
            if (actual.containsKey(artifact)) {
                assertThat(table).as("README's module table lists %s (in the BOM)", artifact)
                        .containsEntry(artifact, actual.get(artifact));
            }
        }
    }

    private static String readUnchecked(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
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
