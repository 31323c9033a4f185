package io.gpusync.examples;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README's "Getting started" tells a consumer that their own build compiles and runs on JDK 25, and how; the
 * consumer projects of integration-tests, which maven-invoker builds the way a user would, do exactly that.
 */
class ReadmeGettingStartedTest {
    private static final String RELEASE = "<maven.compiler.release>25</maven.compiler.release>";
    private static final String TOOLCHAIN = "<goals><goal>select-jdk-toolchain</goal></goals>";
    /** Selected even when Maven runs on 25, so that a plugin's "java" is the toolchain's, never PATH's. */
    private static final String VERSION = "<configuration><version>[25,)</version><useJdk>Never</useJdk></configuration>";

    @Test
    void gettingStartedSaysTheConsumersBuildNeedsJdk25NextToTheDependencySnippet() throws IOException {
        String readme = Files.readString(root().resolve("README.md"));
        String gettingStarted = readme.substring(readme.indexOf("## Getting started"), readme.indexOf("### Modules"));

        assertThat(gettingStarted).contains("gpusync-bom", "**Your own build compiles and runs on JDK 25.**", RELEASE,
                TOOLCHAIN, VERSION, "release version 25 not supported", "JavaLanguageVersion.of(25)");
    }

    @Test
    void everyConsumerProjectCompilesForJava25ThroughTheToolchainReadmeShows() throws IOException {
        List<Path> poms;
        try (Stream<Path> dirs = Files.list(root().resolve("integration-tests/src/it"))) {
            poms = dirs.map(d -> d.resolve("pom.xml")).filter(Files::isRegularFile).sorted().toList();
        }
        assertThat(poms).hasSizeGreaterThanOrEqualTo(5);
        for (Path pom : poms) {
            assertThat(Files.readString(pom)).as(pom.toString()).contains(RELEASE, TOOLCHAIN, VERSION);
        }
    }

    private static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("integration-tests"))) {
                return dir;
            }
        }
        throw new AssertionError("no checkout above " + Path.of("").toAbsolutePath());
    }
}
