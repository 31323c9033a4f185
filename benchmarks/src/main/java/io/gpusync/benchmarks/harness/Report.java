package io.gpusync.benchmarks.harness;

import io.gpusync.benchmarks.subjects.Subjects;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static io.gpusync.benchmarks.harness.CellResult.us;

/** Writes RESULTS.md from the cells of one run: machine, command, tables, ratios to (d), goals, plots. */
final class Report {
    private final Options o;
    private final List<CellResult> results;
    private final List<Path> plots;
    private final Duration took;
    private final StringBuilder b = new StringBuilder();

    Report(Options o, List<CellResult> results, List<Path> plots, Duration took) {
        this.o = o;
        this.results = results;
        this.plots = plots;
        this.took = took;
    }

    String markdown() throws IOException {
        b.append("# gpusync benchmark results\n\n");
        b.append("Written by the harness (`io.gpusync.benchmarks.harness.Harness`) in one run; every figure below was "
                + "measured in that run, except in the hand-written sections, each included as it is from "
                + "`results/*.md` and naming its own run, machine and command (edit the file there and its copy here "
                + "alike: a test holds them equal). Do not edit the rest by hand: rerun the command.\n\n");
        machine();
        headline();
        goals();
        engineFigures();
        for (String s : subjectsInMatrix()) {
            fullTable(s);
        }
        notes();
        jmh();
        handNotes(HAND_NOTES);
        plotsSection();
        method();
        handNotes(HAND_NOTES_AFTER_METHOD);
        return b.toString();
    }

    // ---------------------------------------------------------------- sections

    private void machine() {
        b.append("## Run\n\n");
        b.append("| | |\n|---|---|\n");
        b.append("| date | ").append(ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"))).append(" |\n");
        b.append("| machine | ").append(Runtime.getRuntime().availableProcessors()).append(" CPUs (nproc), ")
                .append(cpuModel()).append(", ").append(memTotal()).append(" RAM; shared and noisy: compare ratios within this run |\n");
        b.append("| OS | ").append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version")).append(" |\n");
        b.append("| JDK | ").append(System.getProperty("java.vm.name")).append(' ').append(Runtime.version())
                .append(" (").append(System.getProperty("java.vendor")).append(") |\n");
        b.append("| JVM flags | `").append(String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments())).append("` |\n");
        b.append("| command | `").append(o.command).append("` |\n");
        if (!o.fileLimit.isEmpty()) {
            b.append("| open files | ").append(o.fileLimit).append(" |\n");
        }
        b.append("| wall time | ").append(took.toSeconds()).append(" s |\n");
        b.append("| settings | N = ").append(o.ns).append("; ≤ ").append(o.latencySamples).append(" latency samples in ≤ ")
                .append(o.latencyBudget.toMillis()).append(" ms; ≤ ").append(o.cancelSamples).append(" cancel samples in ≤ ")
                .append(o.cancelBudget.toMillis()).append(" ms; work (subscribe → signal) ").append(o.work.toNanos() / 1000)
                .append(" µs; wait timeout ").append(o.waitTimeout.toSeconds()).append(" s; idle window ")
                .append(o.idleWindow.toMillis()).append(" ms |\n\n");
        b.append("Regenerate (this file and `results/`): `mvn -B -q install -DskipTests && mvn -B -q -pl benchmarks validate exec:exec@harness`; "
                + "JMH: `mvn -B -q -pl benchmarks validate exec:exec@jmh` (see `benchmarks/README.md`).\n\n");
    }

    private void headline() {
        int n = o.ns.contains(10_000) ? 10_000 : o.ns.get(o.ns.size() - 1);
        b.append("## Headline: N = ").append(fmtInt(n)).append(" concurrent waits\n\n");
        b.append("Wake latency = signal → `onComplete` of one more wait while N are pending; completions/s = a burst "
                + "signalling the N pending waits one by one; ratios are to (d) in the same run (× < 1 is better "
                + "for latency, > 1 better for throughput).\n\n");
        b.append("| subject | approach | wake p50 µs | p99 µs | p99.9 µs | p50 ×(d) | completions/s | ×(d) | threads | heap B/wait | idle CPU % core (threads / process) | cancel→freed p99 µs |\n");
        b.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String s : subjectsInMatrix()) {
            for (String a : o.approaches) {
                cell(s, a, n, "").ifPresent(r -> {
                    Optional<CellResult> d = cell(s, "d", n, "");
                    b.append("| ").append(s).append(" | (").append(a).append(") ").append(shortLabel(a)).append(" | ");
                    if (r.skipped) {
                        b.append("not run: ").append(String.join("; ", r.notes)).append(" |||||||||| \n");
                        return;
                    }
                    b.append(lat(r, 50)).append(" | ").append(lat(r, 99)).append(" | ").append(lat(r, 99.9)).append(" | ")
                            .append(ratio(us(r.latency, 50), d.map(x -> us(x.latency, 50)))).append(" | ")
                            .append(num(r.burstPerSec)).append(" | ")
                            .append(ratio(r.burstPerSec, d.map(x -> x.burstPerSec))).append(" | ")
                            .append(r.threads).append(" | ").append(num(r.heapPerWait)).append(" | ")
                            .append(idle(r)).append(" | ").append(cancel(r, 99)).append(" |\n");
                });
            }
        }
        b.append("\n");
    }

    private void goals() {
        b.append("## Goals\n\n| goal | measured (this run) | verdict |\n|---|---|---|\n");
        int max = o.ns.stream().mapToInt(Integer::intValue).max().orElse(0);
        Optional<CellResult> big = cell(Subjects.HOST_TIMELINE, "d", max, "");
        big.ifPresentOrElse(r -> {
            boolean threads = r.threads >= 0 && r.threads <= 4;
            boolean heap = r.heapPerWait <= 512;
            boolean rate = r.burstPerSec >= 200_000;
            b.append("| ").append(fmtInt(max)).append(" concurrent waits on ≤ 4 library threads, ≤ 512 B heap per wait, ≥ 200,000 completions/s | (d) host-timeline: ")
                    .append(r.subscribed == max ? fmtInt(max) + " pending" : "only " + fmtInt(r.subscribed) + " subscribed")
                    .append(" on ").append(r.threads).append(" engine threads; ").append(num(r.heapPerWait)).append(" B heap/wait; ")
                    .append(num(r.burstPerSec)).append(" completions/s | ")
                    .append(verdict(threads && heap && rate && r.subscribed == max, (threads ? "" : "threads " + r.threads + " > 4; ")
                            + (heap ? "" : String.format(Locale.ROOT, "heap %.0f B = %.2f× the 512 B budget; ", r.heapPerWait, r.heapPerWait / 512))
                            + (rate ? "" : String.format(Locale.ROOT, "throughput %.0f/s = %.2f× the 200,000/s goal; ", r.burstPerSec, r.burstPerSec / 200_000))))
                    .append(" |\n");
        }, () -> b.append("| 100,000 waits … | not measured in this run | — |\n"));
        for (String s : subjectsInMatrix()) {
            cell(s, "d", 10_000, "").ifPresent(r -> b.append("| 10,000 idle pending waits cost ≤ 1 % of a core (").append(s)
                    .append(") | (d): all Java threads ").append(num(r.idleThreadCpuPct)).append(" %, whole process ")
                    .append(num(r.idleCpuPct)).append(" % of a core over ").append(o.idleWindow.toMillis())
                    .append(" ms (process figure: clock-tick resolution) | ")
                    .append(r.skipped ? "not run" : verdict(r.idleCpuPct <= 1.0 && r.idleThreadCpuPct <= 1.0,
                            String.format(Locale.ROOT, "%.2f× the budget", Math.max(r.idleCpuPct, r.idleThreadCpuPct) / 1.0)))
                    .append(" |\n"));
        }
        for (String s : subjectsInMatrix()) {
            double worst = Double.NaN;
            String where = "";
            int misses = 0;
            for (CellResult r : results) {
                if (r.subject.equals(s) && r.approach.equals("d") && r.tag.isEmpty() && r.cancelFreed.getTotalCount() > 0) {
                    double p99 = us(r.cancelFreed, 99);
                    misses += r.cancelMisses;
                    if (Double.isNaN(worst) || p99 > worst) {
                        worst = p99;
                        where = "N = " + fmtInt(r.n);
                    }
                }
            }
            if (!Double.isNaN(worst)) {
                b.append("| cancel → freed ≤ 100 µs p99 (").append(s).append(") | (d): worst p99 over all N ")
                        .append(num(worst)).append(" µs (at ").append(where).append(")").append(misses > 0 ? "; " + misses + " not freed within cap" : "")
                        .append(" | ").append(verdict(worst <= 100 && misses == 0, String.format(Locale.ROOT, "%.2f× the budget", worst / 100)))
                        .append(" |\n");
            }
        }
        for (CellResult g : results) {
            if (g.tag.equals("path") && g.approach.equals("d") && !g.subject.equals(Subjects.HOST_TIMELINE)
                    && !g.subject.equals(Subjects.EVENTFD)) {
                double p99 = us(g.cancelFreed, 99);
                b.append("| cancel → freed ≤ 100 µs p99 (").append(pathOf(g.subject)).append(" path, ").append(g.subject)
                        .append(", no other wait pending) | (d): p99 ").append(cancel(g, 99)).append(" µs")
                        .append(g.cancelMisses > 0 ? "; " + g.cancelMisses + " not freed within cap" : "").append(" | ")
                        .append(Double.isNaN(p99) ? "not measured" : verdict(p99 <= 100 && g.cancelMisses == 0,
                                String.format(Locale.ROOT, "%.2f× the budget", p99 / 100)))
                        .append(" |\n");
            }
        }
        for (CellResult g : results) {
            if (g.tag.equals("path") && g.approach.equals("d")) {
                Optional<CellResult> raw = results.stream().filter(x -> x.tag.equals("path") && x.approach.equals("raw")
                        && x.subject.equals(g.subject)).findFirst();
                double gp = us(g.latency, 50);
                double rp = raw.map(x -> us(x.latency, 50)).orElse(Double.NaN);
                b.append("| `GpuSync` wake p50 ≤ 1.5 × a raw thread blocked in the same wait (").append(pathOf(g.subject)).append(", ")
                        .append(g.subject).append(") | ").append(num(gp)).append(" µs vs raw ").append(num(rp)).append(" µs = ")
                        .append(ratioNum(gp, rp)).append("× | ")
                        .append(Double.isNaN(gp) || Double.isNaN(rp) ? "not measured" : verdict(gp <= 1.5 * rp,
                                String.format(Locale.ROOT, "%.2f× raw (budget 1.5×)", gp / rp)))
                        .append(" |\n");
            }
        }
        b.append("\n");
    }

    private void engineFigures() {
        b.append("## Engine figures\n\n### Wake latency per gpusync path vs a raw platform thread blocked in the same wait\n\n");
        b.append("No other wait pending; each sample subscribes, waits ").append(o.work.toNanos() / 1000)
                .append(" µs, signals and measures signal → `onComplete` (raw: a platform thread per wait in `waiter.await`, "
                        + "completing the `Mono` when it returns). gpusync = a default-built engine.\n\n");
        b.append("| path | subject | gpusync (d) p50 µs | p99 µs | p99.9 µs | raw p50 µs | raw p99 µs | (d) p50 ÷ raw | tuned (e) p50 µs | (e) p99 µs | (e) p50 ÷ raw | (d) cancel→freed p50 µs | p99 µs | `dispose()` p50 µs |\n");
        b.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (CellResult g : results) {
            if (!g.tag.equals("path") || !g.approach.equals("d")) {
                continue;
            }
            Optional<CellResult> raw = results.stream().filter(x -> x.tag.equals("path") && x.approach.equals("raw")
                    && x.subject.equals(g.subject)).findFirst();
            b.append("| ").append(pathOf(g.subject)).append(" | ").append(g.subject).append(" | ").append(lat(g, 50)).append(" | ")
                    .append(lat(g, 99)).append(" | ").append(lat(g, 99.9)).append(" | ")
                    .append(raw.map(r -> lat(r, 50)).orElse("—")).append(" | ").append(raw.map(r -> lat(r, 99)).orElse("—")).append(" | ")
                    .append(ratioNum(us(g.latency, 50), raw.map(r -> us(r.latency, 50)).orElse(Double.NaN))).append(" | ");
            Optional<CellResult> tuned = results.stream().filter(x -> x.tag.equals("path") && x.approach.equals("e")
                    && x.subject.equals(g.subject)).findFirst();
            b.append(tuned.map(t -> lat(t, 50)).orElse("—")).append(" | ").append(tuned.map(t -> lat(t, 99)).orElse("—")).append(" | ")
                    .append(ratioNum(tuned.map(t -> us(t.latency, 50)).orElse(Double.NaN), raw.map(r -> us(r.latency, 50)).orElse(Double.NaN)))
                    .append(" | ").append(cancel(g, 50)).append(" | ").append(cancel(g, 99)).append(" | ").append(num(us(g.disposeCall, 50))).append(" |\n");
        }
        for (CellResult g : results) {
            if (g.tag.equals("path") && (g.latency.getTotalCount() == 0 || !g.notes.isEmpty())) {
                b.append("\n- ").append(g).append(": ").append(g.notes.isEmpty() ? "no samples" : String.join("; ", g.notes));
            }
        }
        b.append("\n\n### Threads and heap per wait at the largest N\n\n");
        b.append("| case | pending | engine threads | JVM threads Δ | heap B/wait | RSS B/wait |\n|---|---:|---:|---:|---:|---:|\n");
        int max = o.ns.stream().mapToInt(Integer::intValue).max().orElse(0);
        for (String s : subjectsInMatrix()) {
            cell(s, "d", max, "").ifPresent(r -> b.append("| (d) ").append(s).append(", timeout ").append(o.waitTimeout.toSeconds())
                    .append(" s | ").append(r.skipped ? "not run" : fmtInt(r.subscribed)).append(" | ").append(r.threads).append(" | ")
                    .append(r.jvmThreadsDelta).append(" | ").append(num(r.heapPerWait)).append(" | ").append(num(r.rssPerWait)).append(" |\n"));
        }
        cell(Subjects.HOST_TIMELINE, "d", max, "forever").ifPresent(r -> b.append("| (d) host-timeline, `SyncPoint.FOREVER` (no timer) | ")
                .append(fmtInt(r.subscribed)).append(" | ").append(r.threads).append(" | ").append(r.jvmThreadsDelta).append(" | ")
                .append(num(r.heapPerWait)).append(" | ").append(num(r.rssPerWait)).append(" |\n"));
        b.append("\nHeap per wait = used heap after full GCs with the waits pending minus before subscribing, divided by the "
                + "waits; it includes the harness's 24-byte subscriber per wait, and excludes the points themselves (made before). "
                + "Timeouts run on the engine's own timer thread, counted among its threads.\n\n");
        b.append("### Cancel → freed, gpusync default, by N\n\n| subject | N | cancel→freed p50 µs | p99 µs | p99.9 µs | samples | not freed in ")
                .append(o.freeCap.toMillis()).append(" ms | `dispose()` p50 µs | p99 µs |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (CellResult r : results) {
            if (r.approach.equals("d") && r.tag.isEmpty() && !r.skipped) {
                b.append("| ").append(r.subject).append(" | ").append(fmtInt(r.n)).append(" | ").append(cancel(r, 50)).append(" | ")
                        .append(cancel(r, 99)).append(" | ").append(cancel(r, 99.9)).append(" | ").append(r.cancelFreed.getTotalCount())
                        .append(" | ").append(r.cancelMisses).append(" | ").append(num(us(r.disposeCall, 50))).append(" | ")
                        .append(num(us(r.disposeCall, 99))).append(" |\n");
            }
        }
        b.append("\nFreed = `engine.pendingWaits()` dropped and (host timeline) the timeline's `pendingWaits()` dropped, "
                + "timed from the `cancel()` call; `dispose()` = the duration of the cancel call itself.\n\n");
    }

    private void fullTable(String s) {
        b.append("## All cells: ").append(s).append("\n\n");
        b.append("| N | approach | subscribed | threads | JVM threads Δ | heap B/wait | RSS B/wait | idle CPU % (threads / process) | wake p50 µs | p99 µs | p99.9 µs | samples (misses) | p50 ×(d) | completions/s | ×(d) | burst p99 µs | cancel→freed p50 µs | p99 µs | (not freed) | notes |\n");
        b.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (int n : o.ns) {
            for (String a : o.approaches) {
                cell(s, a, n, "").ifPresent(r -> {
                    Optional<CellResult> d = cell(s, "d", n, "");
                    b.append("| ").append(fmtInt(n)).append(" | (").append(a).append(") ").append(shortLabel(a)).append(" | ");
                    if (r.skipped) {
                        b.append("not run | | | | | | | | | | | | | | | | | ").append(String.join("; ", r.notes)).append(" |\n");
                        return;
                    }
                    b.append(fmtInt(r.subscribed)).append(" | ").append(r.threads).append(" | ").append(r.jvmThreadsDelta).append(" | ")
                            .append(num(r.heapPerWait)).append(" | ").append(num(r.rssPerWait)).append(" | ").append(idle(r)).append(" | ")
                            .append(lat(r, 50)).append(" | ").append(lat(r, 99)).append(" | ").append(lat(r, 99.9)).append(" | ")
                            .append(r.latency.getTotalCount()).append(" (").append(r.latencyMisses).append(") | ")
                            .append(ratio(us(r.latency, 50), d.map(x -> us(x.latency, 50)))).append(" | ")
                            .append(num(r.burstPerSec)).append(" | ").append(ratio(r.burstPerSec, d.map(x -> x.burstPerSec))).append(" | ")
                            .append(num(us(r.burstLatency, 99))).append(" | ").append(cancel(r, 50)).append(" | ").append(cancel(r, 99))
                            .append(" | ").append(r.cancelMisses).append(" | ")
                            .append(String.join("; ", r.notes)).append(r.errors > 0 ? " " + r.errors + " errors, first: " + r.firstError : "")
                            .append(" |\n");
                });
            }
        }
        b.append("\n");
    }

    private void notes() {
        List<String> lines = new ArrayList<>();
        for (CellResult r : results) {
            if (!r.notes.isEmpty() || r.errors > 0) {
                lines.add("- " + r + ": " + String.join("; ", r.notes)
                        + (r.errors > 0 ? (r.notes.isEmpty() ? "" : "; ") + r.errors + " wait errors, first: " + r.firstError : ""));
            }
        }
        if (!lines.isEmpty()) {
            b.append("## What was capped, missed or skipped\n\n").append(String.join("\n", lines)).append("\n\n");
        }
    }

    private void jmh() throws IOException {
        Path csv = o.out.resolve("results").resolve("jmh.csv");
        if (!Files.exists(csv)) {
            return;
        }
        b.append("## JMH (from `results/jmh.csv`, a separate run: ").append(Files.getLastModifiedTime(csv).toInstant().toString(), 0, 16)
                .append(" UTC)\n\n");
        List<String> lines = Files.readAllLines(csv);
        if (lines.isEmpty()) {
            return;
        }
        List<String> head = splitCsv(lines.get(0));
        int bench = head.indexOf("Benchmark");
        int mode = head.indexOf("Mode");
        int score = head.indexOf("Score");
        int err = head.indexOf("Score Error (99.9%)");
        int unit = head.indexOf("Unit");
        List<Integer> params = new ArrayList<>();
        for (int i = 0; i < head.size(); i++) {
            if (head.get(i).startsWith("Param: ")) {
                params.add(i);
            }
        }
        b.append("| benchmark | params | mode | score | ± (99.9 %) | unit |\n|---|---|---|---:|---:|---|\n");
        for (String line : lines.subList(1, lines.size())) {
            List<String> c = splitCsv(line);
            StringBuilder p = new StringBuilder();
            for (int i : params) {
                if (i < c.size() && !c.get(i).isEmpty()) {
                    p.append(head.get(i).substring(7)).append('=').append(c.get(i)).append(' ');
                }
            }
            String name = c.get(bench);
            b.append("| ").append(name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1)).append(" | ")
                    .append(p.toString().trim()).append(" | ").append(c.get(mode)).append(" | ")
                    .append(num(Double.parseDouble(c.get(score)))).append(" | ")
                    .append(err >= 0 && !c.get(err).isEmpty() && !c.get(err).equals("NaN") ? num(Double.parseDouble(c.get(err))) : "—")
                    .append(" | ").append(c.get(unit)).append(" |\n");
        }
        b.append("\n");
    }

    /**
     * The hand-written sections under {@code results/}, included as they are (each says its own run, machine and
     * command): these before the plots, in this order. {@code RESULTS.md} holds each verbatim (a test checks it), so
     * a rerun of the harness keeps them.
     */
    static final List<String> HAND_NOTES = List.of("notes.md", "cuda-harness-h200.md", "awaitEach-jmh.md",
            "issue15.md", "waiter-handoff-jmh.md", "soak.md", "observation.md", "issue29.md");
    /** The hand-written sections after the method: figures moved out of code comments, and the showcase. */
    static final List<String> HAND_NOTES_AFTER_METHOD = List.of("design-figures.md", "showcase.md");

    /** Hand-written notes and sections measured elsewhere (each says its own run, machine and command). */
    private void handNotes(List<String> names) throws IOException {
        for (String name : names) {
            Path notes = o.out.resolve("results").resolve(name);
            if (Files.exists(notes)) {
                b.append(Files.readString(notes)).append("\n\n");
            }
        }
    }

    private void plotsSection() {
        b.append("## Plots\n\n");
        for (Path p : plots) {
            String rel = "results/" + p.getFileName();
            b.append("![").append(p.getFileName()).append("](").append(rel).append(")\n\n");
        }
        b.append("All figures, one row per cell: [`results/cells.csv`](results/cells.csv).\n\n");
    }

    private void method() {
        b.append("## Approaches and method\n\n");
        for (Map.Entry<String, String> e : Approaches.descriptions().entrySet()) {
            b.append("- **(").append(e.getKey()).append(")** ").append(e.getValue()).append("\n");
        }
        b.append("\nSubjects:\n");
        for (var s : Subjects.all().values()) {
            b.append("- `").append(s.name()).append("`: ").append(s.description()).append("\n");
        }
        b.append("""

                Before the measured cells, a discarded warm-up pass runs every per-path cell and every N = 1 cell with short
                budgets (JIT), so the first cells are not measured on cold code.
                Each cell (subject × approach × N) uses a fresh approach instance (fresh engine or pools) and runs, in order:
                1. **subscribe** N background waits (timeout %s s), capped at %s s;
                2. **settle** %d ms, then count the approach's live threads (by thread name; (c) adds its virtual threads still
                   spinning), the JVM's thread-count change, and heap/RSS per wait (after full GCs; N ≥ 1,000 only);
                3. **idle CPU** over %d ms while the N waits are pending and nothing is signalled, as %% of one core: the sum of
                   every live Java thread's CPU time (`ThreadMXBean#getThreadCpuTime`, ns resolution) / the whole process
                   (`OperatingSystemMXBean#getProcessCpuTime`: GC and JIT included, but clock-tick resolution — 10 ms per window);
                4. **wake latency**: with the N waits still pending, one extra wait at a time: subscribe, wait %d µs, signal,
                   time signal → `onComplete` (HdrHistogram); a wait not complete %d ms after its signal is a miss; 3 misses end the phase;
                5. **cancel → freed**: one extra wait at a time: subscribe, wait, `cancel()`, time until the approach no longer holds it
                   (gpusync: `engine.pendingWaits()`; others: their queue/thread bookkeeping) and the host timeline's `pendingWaits()`
                   dropped; not freed within %d ms is a miss (the point is then signalled to release it);
                6. **burst**: signal the N background waits one by one as fast as possible from the harness thread;
                   completions/s = completed ÷ (last `onComplete` − first signal), capped at %s s.
                Latency on the CALLBACK path includes the `signal()` call itself, since `onComplete` runs inside it.
                """.formatted(o.waitTimeout.toSeconds(), o.subscribeCap.toSeconds(), o.settle.toMillis(), o.idleWindow.toMillis(),
                o.work.toNanos() / 1000, o.sampleCap.toMillis(), o.freeCap.toMillis(), o.burstCap.toSeconds()));
    }

    // ---------------------------------------------------------------- helpers

    private Set<String> subjectsInMatrix() {
        Set<String> s = new LinkedHashSet<>();
        for (CellResult r : results) {
            if (r.tag.isEmpty()) {
                s.add(r.subject);
            }
        }
        return s;
    }

    private Optional<CellResult> cell(String subject, String approach, int n, String tag) {
        return results.stream().filter(r -> r.subject.equals(subject) && r.approach.equals(approach) && r.n == n
                && r.tag.equals(tag)).findFirst();
    }

    static String pathOf(String subject) {
        return switch (subject) {
            case "host-timeline" -> "CALLBACK";
            case "eventfd" -> "EPOLL";
            case "host-timeline/wait-set" -> "WAIT_SET";
            case "host-timeline/blocking" -> "BLOCKING";
            case "host-timeline/probe" -> "PROBE";
            case "vulkan-timeline", "vulkan-queue" -> "WAIT_SET";
            case "opencl-user-event", "opencl-kernel" -> "CALLBACK";
            case "egl-reusable" -> "BLOCKING";
            case "cuda-timeline", "cuda-event" -> "SPIN_THEN_CALLBACK";
            default -> "?";
        };
    }

    private static String shortLabel(String a) {
        return switch (a) {
            case "a" -> "boundedElastic";
            case "b" -> "seed thread";
            case "c" -> "CUDA.jl";
            case "d" -> "gpusync default";
            case "e" -> "gpusync tuned";
            default -> a;
        };
    }

    private static String lat(CellResult r, double p) {
        if (r.latency.getTotalCount() == 0) {
            return r.latencyMisses > 0 ? "miss" : "—";
        }
        return num(us(r.latency, p));
    }

    private static String idle(CellResult r) {
        return num(r.idleThreadCpuPct) + " / " + num(r.idleCpuPct);
    }

    private static String cancel(CellResult r, double p) {
        if (r.cancelFreed.getTotalCount() == 0) {
            return r.cancelMisses > 0 ? "not freed" : "—";
        }
        return num(us(r.cancelFreed, p));
    }

    private static String ratio(double v, Optional<Double> ref) {
        return ratioNum(v, ref.orElse(Double.NaN));
    }

    private static String ratioNum(double v, double ref) {
        if (Double.isNaN(v) || Double.isNaN(ref) || ref == 0) {
            return "—";
        }
        double x = v / ref;
        return String.format(Locale.ROOT, x >= 100 ? "%.0f" : x >= 10 ? "%.1f" : "%.2f", x);
    }

    private static String verdict(boolean met, String missedBy) {
        return met ? "**met**" : "**missed**: " + missedBy.replaceAll("; $", "");
    }

    static String num(double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        double a = Math.abs(v);
        if (a >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    private static String fmtInt(long v) {
        return String.format(Locale.ROOT, "%,d", v);
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            return "unknown CPU";
        }
        return "unknown CPU";
    }

    private static String memTotal() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    long kb = Long.parseLong(line.replaceAll("\\D+", ""));
                    return String.format(Locale.ROOT, "%.1f GiB", kb / 1024.0 / 1024.0);
                }
            }
        } catch (IOException | RuntimeException e) {
            return "? GiB";
        }
        return "? GiB";
    }

    private static List<String> splitCsv(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean q = false;
        for (char c : line.toCharArray()) {
            if (c == '"') {
                q = !q;
            } else if (c == ',' && !q) {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        return out;
    }
}
