package io.gpusync.benchmarks.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the harness from rotting: runs it with tiny N and budgets (seconds) into a temp dir and checks that
 * the report, the CSV and the plots were written with sane numbers. No timing thresholds: the figures of a
 * shared 2-core box are not asserted, only their presence and consistency.
 */
class HarnessSmokeTest {

    @Test
    void aTinyRunWritesTheReportTheCsvAndPngPlotsWithSaneNumbers(@TempDir Path out) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(ModuleLayer.boot().findModule("java.desktop").isPresent(),
                "this Java runtime has no java.desktop (a jlinked one): the harness writes no plots there");
        Options o = Options.parse("--smoke", "--out=" + out, "--n=1,20", "--approaches=a,b,c,d,e",
                "--path-subjects=host-timeline,eventfd,host-timeline/probe", "--command=HarnessSmokeTest");
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        Path md = Harness.run(o, new PrintStream(log, true, StandardCharsets.UTF_8));

        assertThat(md).exists();
        String report = Files.readString(md);
        assertThat(report).contains("# gpusync benchmark results", "## Goals", "## Engine figures",
                "(d) gpusync default", "| CALLBACK |", "| EPOLL |", "| PROBE |", "HarnessSmokeTest", "results/");
        List<Path> pngs;
        try (Stream<Path> files = Files.list(out.resolve("results"))) {
            pngs = files.filter(p -> p.toString().endsWith(".png")).toList();
        }
        assertThat(pngs).isNotEmpty();
        for (Path png : pngs) {
            byte[] head = Files.readAllBytes(png);
            assertThat(head.length).isGreaterThan(1_000);
            assertThat(new String(head, 1, 3, StandardCharsets.US_ASCII)).isEqualTo("PNG");
            assertThat(report).contains("results/" + png.getFileName());
        }

        List<String> csv = Files.readAllLines(out.resolve("results/cells.csv"));
        List<String> header = List.of(csv.get(0).split(","));
        // 3 path subjects × (d, e, raw) + 2 N × 2 subjects × 5 approaches
        assertThat(csv).hasSize(1 + 9 + 20);
        for (String line : csv.subList(1, csv.size())) {
            String[] c = line.split(",", -1);
            String cell = c[0] + " (" + c[1] + ") N=" + c[2];
            assertThat(c[col(header, "skipped")]).as(cell).isEqualTo("false");
            int n = Integer.parseInt(c[col(header, "n")]);
            assertThat(Integer.parseInt(c[col(header, "subscribed")])).as(cell).isEqualTo(n);
            assertThat(Integer.parseInt(c[col(header, "threads")])).as(cell).isBetween(0, 64);
            if (n > 0) {
                // every background wait completes in the burst, none fails
                assertThat(Integer.parseInt(c[col(header, "burst_completed")])).as(cell).isEqualTo(n);
                assertThat(Double.parseDouble(c[col(header, "burst_per_s")])).as(cell).isPositive();
            }
            assertThat(Integer.parseInt(c[col(header, "errors")])).as(cell).isZero();
            if (c[1].equals("d")) {
                // gpusync answers every measured wait and frees every cancelled one (generous caps, no timing asserted)
                assertThat(Long.parseLong(c[col(header, "lat_samples")])).as(cell).isPositive();
                assertThat(Double.parseDouble(c[col(header, "lat_p50_us")])).as(cell).isPositive();
                assertThat(Double.parseDouble(c[col(header, "lat_p99_us")]))
                        .as(cell).isGreaterThanOrEqualTo(Double.parseDouble(c[col(header, "lat_p50_us")]));
                assertThat(Long.parseLong(c[col(header, "cancel_samples")])).as(cell).isPositive();
            }
        }
        assertThat(log.toString(StandardCharsets.UTF_8)).contains("all cells done");
    }

    private static int col(List<String> header, String name) {
        int i = header.indexOf(name);
        assertThat(i).as(name).isNotNegative();
        return i;
    }
}
