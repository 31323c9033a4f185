package io.gpusync.benchmarks.harness;

import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;

/** What one cell (subject × approach × N) measured; NaN / -1 = not measured (the notes say why). */
public final class CellResult {
    static final long HIGHEST_NANOS = 3_600_000_000_000L;

    public final String subject;
    public final String approach;
    public final int n;
    public final String tag;
    public final List<String> notes = new ArrayList<>();
    public boolean skipped;
    public boolean capped;

    public int subscribed;
    public long subscribeNanos;
    public int threads = -1;
    public int jvmThreadsDelta;
    public double heapPerWait = Double.NaN;
    public double rssPerWait = Double.NaN;
    /** Process CPU (getProcessCpuTime, clock-tick resolution) over the idle window, % of one core. */
    public double idleCpuPct = Double.NaN;
    /** Sum of every live thread's CPU time (ThreadMXBean, ns resolution) over the idle window, % of one core. */
    public double idleThreadCpuPct = Double.NaN;

    public final Histogram latency = new Histogram(HIGHEST_NANOS, 3);
    public int latencyMisses;
    public final Histogram cancelFreed = new Histogram(HIGHEST_NANOS, 3);
    public final Histogram disposeCall = new Histogram(HIGHEST_NANOS, 3);
    public int cancelMisses;

    public double burstPerSec = Double.NaN;
    public int burstCompleted;
    public long burstNanos;
    public final Histogram burstLatency = new Histogram(HIGHEST_NANOS, 3);

    public int errors;
    public String firstError;

    CellResult(String subject, String approach, int n, String tag) {
        this.subject = subject;
        this.approach = approach;
        this.n = n;
        this.tag = tag;
    }

    /** {@code p} (0–100) of {@code h} in µs, or NaN if empty. */
    public static double us(Histogram h, double p) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(p) / 1_000.0;
    }

    @Override
    public String toString() {
        return subject + " (" + approach + ") N=" + n + (tag.isEmpty() ? "" : " " + tag);
    }
}
