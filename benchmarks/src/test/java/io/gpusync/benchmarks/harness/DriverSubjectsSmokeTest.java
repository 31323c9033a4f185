package io.gpusync.benchmarks.harness;

import io.gpusync.benchmarks.subjects.Subject;
import io.gpusync.benchmarks.subjects.Subjects;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The driver-backed subjects (Vulkan queue, OpenCL marker behind a gate, EGL reusable sync, CUDA gated
 * timeline/event) through the harness with tiny budgets: each one either runs — every background wait
 * completes, gpusync answers measured waits — or is reported as not run with a reason (its driver is
 * missing here). Never a failed cell, never a hang. No timings asserted.
 */
class DriverSubjectsSmokeTest {
    private static final List<String> NEW = List.of("vulkan-queue", "opencl-kernel", "egl-reusable", "cuda-timeline", "cuda-event");

    @Test
    void everyDriverSubjectRunsOrIsSkippedWithAReason(@TempDir Path out) throws Exception {
        assertThat(Subjects.all().keySet()).containsAll(NEW);
        Options o = Options.parse("--smoke", "--out=" + out, "--n=20", "--approaches=d",
                "--subjects=" + String.join(",", NEW), "--path-subjects=" + String.join(",", NEW),
                "--command=DriverSubjectsSmokeTest");
        // no timings asserted: a measured wait may take long on a loaded CPU driver (lavapipe's first submission of a
        // run compiles its pipeline; a CI box shared with other builds measured 1 wait over the smoke's 50 ms cap)
        o.sampleCap = java.time.Duration.ofSeconds(2);
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        Harness.run(o, new PrintStream(log, true, StandardCharsets.UTF_8));
        String logText = log.toString(StandardCharsets.UTF_8);
        System.out.println(logText);

        List<String> csv = Files.readAllLines(out.resolve("results/cells.csv"));
        List<String> header = List.of(csv.get(0).split(","));
        assertThat(csv).hasSize(1 + NEW.size() * 3 + NEW.size());
        for (String line : csv.subList(1, csv.size())) {
            String[] c = line.split(",", -1);
            String cell = c[0] + " (" + c[1] + ") N=" + c[2];
            Subject s = Subjects.byName(c[0]);
            String why = s.unavailableReason();
            if (why != null) {
                assertThat(c[col(header, "skipped")]).as(cell).isEqualTo("true");
                assertThat(logText).contains(why);
                continue;
            }
            assertThat(c[col(header, "skipped")]).as(cell).isEqualTo("false");
            assertThat(logText).doesNotContain("cell failed");
            int n = Integer.parseInt(c[col(header, "n")]);
            if (n > 0) {
                assertThat(Integer.parseInt(c[col(header, "burst_completed")])).as(cell).isEqualTo(n);
            }
            assertThat(Integer.parseInt(c[col(header, "errors")])).as(cell).isZero();
            if (c[1].equals("d")) {
                assertThat(Long.parseLong(c[col(header, "lat_samples")])).as(cell).isPositive();
            }
        }
    }

    private static int col(List<String> header, String name) {
        int i = header.indexOf(name);
        assertThat(i).as(name).isNotNegative();
        return i;
    }
}
