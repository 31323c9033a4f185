package io.gpusync.benchmarks.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** Every figure of every cell, one row per cell (for anyone who wants to plot differently). */
final class Csv {
    private Csv() {
    }

    static void write(Path file, List<CellResult> results) throws IOException {
        StringBuilder b = new StringBuilder("subject,approach,n,tag,skipped,capped,subscribed,subscribe_ms,threads,"
                + "jvm_threads_delta,heap_b_per_wait,rss_b_per_wait,idle_cpu_pct,idle_thread_cpu_pct,lat_samples,lat_misses,lat_p50_us,"
                + "lat_p99_us,lat_p999_us,lat_max_us,cancel_samples,cancel_misses,cancel_p50_us,cancel_p99_us,"
                + "dispose_p50_us,dispose_p99_us,burst_completed,burst_ms,burst_per_s,burst_p50_us,burst_p99_us,"
                + "errors,notes\n");
        for (CellResult r : results) {
            b.append(String.join(",", r.subject, r.approach, Integer.toString(r.n), r.tag,
                    Boolean.toString(r.skipped), Boolean.toString(r.capped), Integer.toString(r.subscribed),
                    f(r.subscribeNanos / 1e6), Integer.toString(r.threads), Integer.toString(r.jvmThreadsDelta),
                    f(r.heapPerWait), f(r.rssPerWait), f(r.idleCpuPct), f(r.idleThreadCpuPct), Long.toString(r.latency.getTotalCount()),
                    Integer.toString(r.latencyMisses), f(CellResult.us(r.latency, 50)), f(CellResult.us(r.latency, 99)),
                    f(CellResult.us(r.latency, 99.9)), f(CellResult.us(r.latency, 100)),
                    Long.toString(r.cancelFreed.getTotalCount()), Integer.toString(r.cancelMisses),
                    f(CellResult.us(r.cancelFreed, 50)), f(CellResult.us(r.cancelFreed, 99)),
                    f(CellResult.us(r.disposeCall, 50)), f(CellResult.us(r.disposeCall, 99)),
                    Integer.toString(r.burstCompleted), f(r.burstNanos / 1e6), f(r.burstPerSec),
                    f(CellResult.us(r.burstLatency, 50)), f(CellResult.us(r.burstLatency, 99)),
                    Integer.toString(r.errors), '"' + String.join("; ", r.notes).replace('"', '\'') + '"'));
            b.append('\n');
        }
        Files.writeString(file, b);
    }

    private static String f(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.3f", v);
    }
}
