package io.gpusync.examples;

import io.gpusync.examples.device.Units;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The showcase's results: one {@link Row} per await mode and in-flight level, written as a markdown table, a CSV and
 * a PNG (req/s and client p99 against in-flight, one line per mode), and the reasons the run fails, if any.
 */
final class ShowcaseReport {
    private static final String CSV_HEADER = "await,in_flight,req_per_s,client_p50_us,client_p99_us,gpu_wait_p50_us,"
            + "gpu_wait_p99_us,platform_threads_peak,virtual_threads_peak,await_threads,cpu_us_per_req,server_cpu_us_per_req,"
            + "answered,timeouts,other_status,client_errors,checked,checksum_failures";

    /**
     * One cell. Latencies in microseconds; CPU per answered request in microseconds, of the whole process and of
     * the process less the load client's threads.
     */
    record Row(AwaitMode mode, int inFlight, double reqPerSec, double clientP50, double clientP99, double gpuP50,
               double gpuP99, int platformThreads, int virtualThreads, int awaitThreads, double cpuPerReq,
               double serverCpuPerReq,
               long ok, long timeouts, long otherStatus, long clientErrors, long checked, long checksumFailures) {

        static Row of(AwaitMode mode, int inFlight, LoadRunner.Result r) {
            Histogram l = r.latency();
            Histogram g = r.gpuWait();
            double cpu = Double.NaN;
            double serverCpu = Double.NaN;
            if (r.cpu() != null && r.ok() > 0 && r.cpu().processNanos() >= 0) {
                long client = r.cpu().byGroup().getOrDefault(ThreadCpu.Group.LOAD_CLIENT, 0L);
                cpu = r.cpu().processNanos() / 1e3 / r.ok();
                serverCpu = Math.max(0, r.cpu().processNanos() - client) / 1e3 / r.ok();
            }
            return new Row(mode, inFlight, r.throughput(),
                    l.getTotalCount() == 0 ? Double.NaN : l.getValueAtPercentile(50) / 1e3,
                    l.getTotalCount() == 0 ? Double.NaN : l.getValueAtPercentile(99) / 1e3,
                    g.getTotalCount() == 0 ? Double.NaN : g.getValueAtPercentile(50),
                    g.getTotalCount() == 0 ? Double.NaN : g.getValueAtPercentile(99),
                    r.threads().platformPeak(), r.threads().virtualPeak(), r.threads().awaitThreads(mode), cpu,
                    serverCpu, r.ok(), r.timeouts(),
                    r.otherStatus(), r.clientErrors(), r.checks().checked(), r.checks().failures());
        }

        /** One line for the log. */
        String summary() {
            return String.format(Locale.ROOT, "%,.0f req/s, client p50 %s p99 %s, GPU wait p50 %s p99 %s, threads %d"
                            + " platform + %d virtual (%d awaiting), CPU %s per request, %s answered, %s timed out,"
                            + " %s checksums wrong",
                    reqPerSec, us(clientP50), us(clientP99), us(gpuP50), us(gpuP99), platformThreads, virtualThreads,
                    awaitThreads, us(cpuPerReq), Units.count(ok), Units.count(timeouts), Units.count(checksumFailures));
        }

        String csv() {
            return String.join(",", mode.id(), Integer.toString(inFlight), num(reqPerSec), num(clientP50),
                    num(clientP99), num(gpuP50), num(gpuP99), Integer.toString(platformThreads),
                    Integer.toString(virtualThreads), Integer.toString(awaitThreads), num(cpuPerReq), num(serverCpuPerReq), Long.toString(ok),
                    Long.toString(timeouts), Long.toString(otherStatus), Long.toString(clientErrors),
                    Long.toString(checked), Long.toString(checksumFailures));
        }
    }

    private final String device;
    private final String work;
    private final boolean onDevice;
    private final List<Row> rows;

    ShowcaseReport(String device, String work, boolean onDevice, List<Row> rows) {
        this.device = device;
        this.work = work;
        this.onDevice = onDevice;
        this.rows = List.copyOf(rows);
    }

    /** The table, with the device and the work above it. */
    String markdown() {
        StringBuilder sb = new StringBuilder();
        sb.append("Device: ").append(device).append("\n\nWork: ").append(work).append(onDevice ? "" : " (no GPU work)")
                .append("\n\n| await | in flight | req/s | client p50 | client p99 | GPU wait p50 | GPU wait p99 "
                        + "| threads (peak: platform + virtual) | await threads | CPU / req (process) "
                        + "| CPU / req (less load client) | answered | timeouts | checksums wrong |\n")
                .append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            sb.append(String.format(Locale.ROOT, "| %s | %,d | %,.0f | %s | %s | %s | %s | %d + %d | %d | %s | %s | %s | %s | %s |%n",
                    r.mode().id(), r.inFlight(), r.reqPerSec(), us(r.clientP50()), us(r.clientP99()), us(r.gpuP50()),
                    us(r.gpuP99()), r.platformThreads(), r.virtualThreads(), r.awaitThreads(), us(r.cpuPerReq()), us(r.serverCpuPerReq()),
                    Units.count(r.ok()), Units.count(r.timeouts()), Units.count(r.checksumFailures())));
        }
        return sb.toString();
    }

    /** Writes {@code showcase.md}, {@code showcase.csv} and {@code showcase.png} (when AWT is there) into {@code dir}. */
    List<Path> write(Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Path> written = new ArrayList<>();
        Path md = dir.resolve("showcase.md");
        Files.writeString(md, markdown());
        written.add(md);
        List<String> csv = new ArrayList<>();
        csv.add(CSV_HEADER);
        rows.forEach(r -> csv.add(r.csv()));
        Path csvFile = dir.resolve("showcase.csv");
        Files.write(csvFile, csv);
        written.add(csvFile);
        if (ModuleLayer.boot().findModule("java.desktop").isPresent()) {
            Map<String, List<double[]>> reqPerSec = new LinkedHashMap<>();
            Map<String, List<double[]>> p99 = new LinkedHashMap<>();
            for (Row r : rows) {
                reqPerSec.computeIfAbsent(r.mode().id(), k -> new ArrayList<>()).add(new double[]{r.inFlight(), r.reqPerSec()});
                if (!Double.isNaN(r.clientP99())) {
                    p99.computeIfAbsent(r.mode().id(), k -> new ArrayList<>()).add(new double[]{r.inFlight(), r.clientP99() / 1e3});
                }
            }
            Path png = dir.resolve("showcase.png");
            LatencyPlot.againstInFlight(png, "Real work on " + device.split(":")[0] + ": the same requests, three ways to await them",
                    reqPerSec, "answered req/s", p99, "client p99 (ms, log)");
            written.add(png);
        }
        return written;
    }

    /** Why the run fails: a wrong or missing checksum, or a cell without a single answer. Empty when it passes. */
    List<String> failures() {
        List<String> f = new ArrayList<>();
        for (Row r : rows) {
            String cell = r.mode().id() + " at " + r.inFlight() + " in flight";
            if (r.checksumFailures() > 0) {
                f.add(cell + ": " + r.checksumFailures() + " of " + r.checked() + " checksums differ from the CPU's");
            }
            if (r.ok() == 0) {
                f.add(cell + ": no request was answered (" + r.timeouts() + " timed out, " + r.otherStatus()
                        + " other statuses, " + r.clientErrors() + " without answer)");
            }
        }
        return f;
    }

    private static String us(double micros) {
        return Double.isNaN(micros) ? "-" : Units.duration(Math.round(micros * 1e3));
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.1f", v);
    }
}
