package io.gpusync.benchmarks.harness;

import io.gpusync.SyncPoint;
import io.gpusync.benchmarks.subjects.EventFdSubject;
import io.gpusync.benchmarks.subjects.FileLimit;
import io.gpusync.benchmarks.subjects.Subject;
import io.gpusync.benchmarks.subjects.Subjects;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The latency/scale harness: measures gpusync and the alternatives side by side, prints a progress line
 * per phase and a summary line per cell, then writes {@code RESULTS.md}, {@code results/cells.csv} and the
 * PNG plots under {@code --out}. Run it with
 * {@code mvn -B -q install -DskipTests && mvn -B -q -pl benchmarks validate exec:exec@harness} (see benchmarks/README.md).
 */
public final class Harness {
    private Harness() {
    }

    public static void main(String[] args) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Options o = Options.parse(args);
        if (o.command.isEmpty()) {
            o.command = "java … io.gpusync.benchmarks.harness.Harness " + String.join(" ", args);
        }
        Path report = run(o, System.err);
        System.out.println("wrote " + report.toAbsolutePath());
    }

    /** Runs every cell the options ask for and writes the report; returns the path of RESULTS.md. */
    public static Path run(Options o, PrintStream log) throws IOException {
        System.setProperty("java.awt.headless", "true");
        // one eventfd per pending wait: the soft open-files limit up to the hard one, said in the log and the report
        long fdsWanted = o.subjects.contains(Subjects.EVENTFD) || o.pathSubjects.contains(Subjects.EVENTFD)
                ? EventFdSubject.fdsFor(o.ns.stream().mapToLong(Integer::longValue).max().orElse(0) + o.latencySamples
                        + o.cancelSamples)
                : 0;
        o.fileLimit = FileLimit.raiseSoftToHard().describe(fdsWanted);
        log.println(o.fileLimit);
        List<Planned> plan = new ArrayList<>();
        for (String s : o.pathSubjects) {
            Subjects.byName(s); // an unknown name fails before anything runs
        }
        for (String s : o.subjects) {
            Subjects.byName(s);
        }
        for (String s : o.pathSubjects) {
            if (o.pathSubjects == Options.DEFAULT_PATH_SUBJECTS) {
                String why = Subjects.byName(s).unavailableReason();
                if (why != null) {
                    log.println("path subject " + s + " left out of the default list: " + why);
                    continue;
                }
            }
            for (String a : List.of("d", "e", "raw")) {
                plan.add(new Planned(Subjects.byName(s), a, 0, o.waitTimeout, false, "path"));
            }
        }
        for (int n : o.ns) {
            for (String s : o.subjects) {
                for (String a : o.approaches) {
                    plan.add(new Planned(Subjects.byName(s), a, n, o.waitTimeout, false, ""));
                }
            }
        }
        if (o.foreverHeapCheck && o.approaches.contains("d")) {
            int max = o.ns.stream().mapToInt(Integer::intValue).max().orElse(1);
            plan.add(new Planned(Subjects.byName(Subjects.HOST_TIMELINE), "d", max, SyncPoint.FOREVER, true, "forever"));
        }
        long start = System.nanoTime();
        if (o.warmup) {
            // JIT warm-up: the same code paths once, short, results discarded (the first cells are otherwise cold)
            Options w = o.warmupCopy();
            CellRunner warm = new CellRunner(w, phase -> { });
            List<Planned> warmPlan = new ArrayList<>();
            for (Planned p : plan) {
                if ((p.tag.equals("path") || p.n == 1) && !p.heapOnly) {
                    warmPlan.add(p);
                }
            }
            // and the burst: each matrix approach WARM_BURSTS times at a burst of WARM_BURST waits (the smallest N
            // above 1 if lower), so that no approach's measured bursts run while the JIT is still compiling and
            // deoptimising its completion path (a 10,000-wait burst measured ~20x slower before that settles)
            int burst = o.ns.stream().mapToInt(Integer::intValue).filter(n -> n > 1).min().orElse(0);
            burst = Math.min(Math.max(burst, o.ns.stream().mapToInt(Integer::intValue).filter(n -> n > 1)
                    .filter(n -> n <= WARM_BURST).max().orElse(burst)), WARM_BURST);
            List<Planned> bursts = new ArrayList<>();
            for (Planned p : plan) {
                if (burst > 1 && p.tag.isEmpty() && p.n > 1 && !p.heapOnly
                        && bursts.stream().noneMatch(q -> q.subject.name().equals(p.subject.name()) && q.approach.equals(p.approach))) {
                    bursts.add(new Planned(p.subject, p.approach, burst, p.timeout, false, ""));
                }
            }
            for (int r = 0; r < WARM_BURSTS; r++) {
                warmPlan.addAll(bursts);
            }
            for (int i = 0; i < warmPlan.size(); i++) {
                Planned p = warmPlan.get(i);
                log.printf(Locale.ROOT, "[warm-up %d/%d] %s (%s) N=%d%n", i + 1, warmPlan.size(), p.subject.name(), p.approach, p.n);
                warm.run(p.subject, p.approach, p.n, p.timeout, false, "warm-up");
            }
        }
        List<CellResult> results = new ArrayList<>();
        for (int i = 0; i < plan.size(); i++) {
            Planned p = plan.get(i);
            String head = String.format(Locale.ROOT, "[%3d/%d %s] %-24s (%s) N=%-6d%s", i + 1, plan.size(),
                    clock(System.nanoTime() - start), p.subject.name(), p.approach, p.n,
                    p.tag.isEmpty() ? "" : " " + p.tag);
            CellRunner runner = new CellRunner(o, phase -> {
                log.println(head + " … " + phase);
                log.flush();
            });
            CellResult r = runner.run(p.subject, p.approach, p.n, p.timeout, p.heapOnly, p.tag);
            results.add(r);
            log.println(head + " = " + summary(r));
            log.flush();
        }
        log.println("all cells done in " + clock(System.nanoTime() - start) + "; writing the report");
        Path resultsDir = o.out.resolve("results");
        Files.createDirectories(resultsDir);
        Csv.write(resultsDir.resolve("cells.csv"), results);
        List<Path> plots = o.plots && ModuleLayer.boot().findModule("java.desktop").isPresent()
                ? Plots.write(resultsDir, results, o)
                : List.of(); // a runtime without AWT (e.g. a jlinked one) gets the tables, not the plots
        Path md = o.out.resolve("RESULTS.md");
        Files.writeString(md, new Report(o, results, plots, Duration.ofNanos(System.nanoTime() - start)).markdown());
        return md;
    }

    /** The largest burst of the warm-up pass, and how many times each approach bursts there (see {@link #run}). */
    static final int WARM_BURST = 10_000;
    static final int WARM_BURSTS = 3;

    private static String summary(CellResult r) {
        if (r.skipped) {
            return String.join("; ", r.notes);
        }
        return String.format(Locale.ROOT,
                "p50 %s µs p99 %s µs (%d samples) | %s compl/s | threads %d | heap %s B/wait | idle CPU %s %% (threads %s %%) | cancel→freed p99 %s µs%s",
                Report.num(CellResult.us(r.latency, 50)), Report.num(CellResult.us(r.latency, 99)), r.latency.getTotalCount(),
                Report.num(r.burstPerSec), r.threads, Report.num(r.heapPerWait), Report.num(r.idleCpuPct), Report.num(r.idleThreadCpuPct),
                Report.num(CellResult.us(r.cancelFreed, 99)), r.notes.isEmpty() ? "" : " | " + String.join("; ", r.notes));
    }

    private static String clock(long nanos) {
        long s = nanos / 1_000_000_000L;
        return String.format(Locale.ROOT, "%02d:%02d", s / 60, s % 60);
    }

    private record Planned(Subject subject, String approach, int n, Duration timeout, boolean heapOnly, String tag) {
    }
}
