package io.gpusync.reactor;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Micrometer meters of one engine, tagged {@code engine} and {@code path}:
 * <ul>
 *   <li>{@code gpusync.waits.pending} (gauge) — waits started and not yet terminated;</li>
 *   <li>{@code gpusync.waits} (counter, tag {@code outcome} = completed | failed | timeout | cancelled);</li>
 *   <li>{@code gpusync.wait.duration} (timer, with a percentile histogram) — subscription → completion;</li>
 *   <li>{@code gpusync.wake.latency} (timer, with a percentile histogram) — the engine seeing the signal →
 *       the subscriber's {@code onComplete} (the cost the engine adds to a wake).</li>
 * </ul>
 */
final class MicrometerMetrics implements EngineMetrics {
    private final Map<WaitPath, Counter> completed = new EnumMap<>(WaitPath.class);
    private final Map<WaitPath, Counter> failed = new EnumMap<>(WaitPath.class);
    private final Map<WaitPath, Counter> timedOut = new EnumMap<>(WaitPath.class);
    private final Map<WaitPath, Counter> cancelled = new EnumMap<>(WaitPath.class);
    private final Map<WaitPath, Timer> duration = new EnumMap<>(WaitPath.class);
    private final Map<WaitPath, Timer> wake = new EnumMap<>(WaitPath.class);

    MicrometerMetrics(MeterRegistry registry, String engine, SyncEngine source) {
        Gauge.builder("gpusync.waits.pending", source, SyncEngine::pendingWaits)
                .tag("engine", engine).description("waits started and not yet terminated").register(registry);
        for (WaitPath path : WaitPath.values()) {
            String p = path.name().toLowerCase(java.util.Locale.ROOT);
            completed.put(path, counter(registry, engine, p, "completed"));
            failed.put(path, counter(registry, engine, p, "failed"));
            timedOut.put(path, counter(registry, engine, p, "timeout"));
            cancelled.put(path, counter(registry, engine, p, "cancelled"));
            duration.put(path, Timer.builder("gpusync.wait.duration").tag("engine", engine).tag("path", p)
                    .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(500))
                    .maximumExpectedValue(Duration.ofSeconds(30)).register(registry));
            wake.put(path, Timer.builder("gpusync.wake.latency").tag("engine", engine).tag("path", p)
                    .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(100))
                    .maximumExpectedValue(Duration.ofSeconds(1)).register(registry));
        }
    }

    private static Counter counter(MeterRegistry registry, String engine, String path, String outcome) {
        return Counter.builder("gpusync.waits").tag("engine", engine).tag("path", path).tag("outcome", outcome)
                .register(registry);
    }

    @Override
    public void completed(WaitPath path, long waitNanos) {
        completed.get(path).increment();
        duration.get(path).record(waitNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void failed(WaitPath path, Throwable error) {
        failed.get(path).increment();
    }

    @Override
    public void timedOut(WaitPath path) {
        timedOut.get(path).increment();
    }

    @Override
    public void cancelled(WaitPath path) {
        cancelled.get(path).increment();
    }

    @Override
    public void delivered(WaitPath path, long latencyNanos) {
        wake.get(path).record(latencyNanos, TimeUnit.NANOSECONDS);
    }
}
