package io.gpusync.benchmarks.harness;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * RESULTS.md keeps every hand-written section of {@code results/} verbatim, so that a rerun of the harness, which
 * writes RESULTS.md anew from its own measurements and those files, loses none of them.
 */
class ResultsHandNotesTest {
    /** The benchmarks module: Maven runs its tests there; the device's whole-suite launcher, in the repository root. */
    private static final Path BENCHMARKS = Files.exists(Path.of("RESULTS.md")) ? Path.of("").toAbsolutePath()
            : Path.of("benchmarks").toAbsolutePath();

    @Test
    void everyHandWrittenSectionStandsInResultsAsItIsInItsFile() throws IOException {
        String results = Files.readString(BENCHMARKS.resolve("RESULTS.md"));
        List<String> names = new ArrayList<>(Report.HAND_NOTES);
        names.addAll(Report.HAND_NOTES_AFTER_METHOD);
        for (String name : names) {
            Path file = BENCHMARKS.resolve("results").resolve(name);
            assertThat(file).as("a hand-written section the harness includes").exists();
            assertThat(results).as("RESULTS.md holds results/%s as it is", name)
                    .contains(Files.readString(file).strip());
        }
    }

    @Test
    void handWrittenSectionsStandInResultsInTheOrderTheHarnessWritesThem() throws IOException {
        String results = Files.readString(BENCHMARKS.resolve("RESULTS.md"));
        List<String> names = new ArrayList<>(Report.HAND_NOTES);
        names.addAll(Report.HAND_NOTES_AFTER_METHOD);
        int last = -1;
        for (String name : names) {
            int at = results.indexOf(Files.readString(BENCHMARKS.resolve("results").resolve(name)).strip());
            assertThat(at).as("results/%s comes after the section before it", name).isGreaterThan(last);
            last = at;
        }
    }
}
