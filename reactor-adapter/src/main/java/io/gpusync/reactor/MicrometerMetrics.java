package io.gpusync.reactor;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The meters {@link GpuSyncMetrics} documents, registered in one registry for one engine, and the engine's
 * {@link EngineMetrics} sink that updates them. Thread-safe (Micrometer's meters are).
 */
final class MicrometerMetrics implements EngineMetrics {
    private final Map<WaitPath, Counter> completed = new EnumMap<>(WaitPath.class);
    private final Map<WaitPath, Counter> failed = new EnumMap<>(WaitPath.class);
    private final Map<WaitPath, Counter> timedOut = new EnumMap<>(WaitPath.class);
    private final Map<WaitPath, Counter> cancelled = new EnumMap<>(WaitPath.class);
    private final Map<WaitPath, Timer> duration = new EnumMap<>(WaitPath.class);
    private final Map<WaitPath, Timer> wake = new EnumMap<>(WaitPath.class);

    MicrometerMetrics(MeterRegistry registry, SyncEngine source, boolean histograms, Tags extraTags) {
        Tags engine = extraTags.and("engine", source.name());
        Gauge.builder("gpusync.waits.pending", source, SyncEngine::pendingWaits).tags(engine)
                .description("gpusync waits started and not yet terminated").register(registry);
        FunctionCounter.builder("gpusync.waits.device.lost", source, e -> e.health().deviceLostFailures())
                .tags(engine).description("gpusync waits that failed because their device or context is gone"
                        + " (DeviceLostException or another FATAL error)").register(registry);
        for (WaitPath path : WaitPath.values()) {
            Tags tags = engine.and("path", path.name().toLowerCase(Locale.ROOT));
            completed.put(path, counter(registry, tags, "completed"));
            failed.put(path, counter(registry, tags, "failed"));
            timedOut.put(path, counter(registry, tags, "timeout"));
            cancelled.put(path, counter(registry, tags, "cancelled"));
            Timer.Builder waited = Timer.builder("gpusync.wait.duration").tags(tags)
                    .description("gpusync wait time of completed waits: subscription to the engine seeing the"
                            + " point signalled");
            Timer.Builder woken = Timer.builder("gpusync.wake.latency").tags(tags)
                    .description("gpusync wake latency: the engine seeing the signal to the subscriber's"
                            + " onComplete");
            if (histograms) {
                waited.publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(500))
                        .maximumExpectedValue(Duration.ofSeconds(30));
                woken.publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(100))
                        .maximumExpectedValue(Duration.ofSeconds(1));
            }
            duration.put(path, waited.register(registry));
            wake.put(path, woken.register(registry));
        }
    }

    private static Counter counter(MeterRegistry registry, Tags tags, String outcome) {
        return Counter.builder("gpusync.waits").tags(tags).tag("outcome", outcome)
                .description("gpusync waits terminated, by path and outcome (completed: signalled; failed: a"
                        + " driver or configuration error; timeout; cancelled, or ended by the engine's dispose)")
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
