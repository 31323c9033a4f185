package io.gpusync.reactor;

import org.junit.jupiter.api.Test;
import org.openjdk.jcstress.JCStress;
import org.openjdk.jcstress.Options;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Runs the jcstress tests of this module ({@link PendingWaitStress}, {@link NativeAnchorStress}) in forked
 * JVMs, in jcstress's short {@code sanity} mode so that CI runs them in about a minute; any forbidden outcome
 * fails the build. For a thorough run: {@code -Dgpusync.jcstress.mode=quick} (or {@code default}, {@code tough}).
 */
class ConcurrencyStressTest {

    @Test
    void terminationsAndClaimsHaveNoForbiddenOutcome() throws Exception {
        assumeTrue(ModuleLayer.boot().findModule("java.desktop").isPresent(),
                "this Java runtime has no java.desktop (a jlinked one): jcstress grades its results with java.awt;"
                        + " CI runs this test on a full JDK");
        Path results = Files.createDirectories(Path.of("target", "jcstress"));
        Options options = new Options(new String[] {
                "-t", "io\\.gpusync\\.reactor\\.(PendingWaitStress|NativeAnchorStress).*",
                "-m", System.getProperty("gpusync.jcstress.mode", "sanity"),
                "-f", "1",
                "-r", results.resolve("report").toString(),
                "-jvmArgs", "--enable-native-access=ALL-UNNAMED"});
        assertThat(options.parse()).isTrue();
        JCStress jcstress = new JCStress(options);
        java.util.SortedSet<String> tests = jcstress.getTests();
        assertThat(tests).hasSize(7);
        try {
            jcstress.run(); // throws on any forbidden outcome or test error
        } finally { // jcstress writes its result blob to the working directory: keep it under target/
            try (var blobs = Files.newDirectoryStream(Path.of("."), "jcstress-results-*.bin.gz")) {
                for (Path blob : blobs) {
                    Files.move(blob, results.resolve(blob.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        for (String test : tests) { // and did run every test (it only prints a line when it cannot)
            assertThat(results.resolve("report").resolve(test + ".html")).as(test + " ran").exists();
        }
    }
}
