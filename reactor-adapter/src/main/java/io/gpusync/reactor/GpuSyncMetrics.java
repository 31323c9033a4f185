package io.gpusync.reactor;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

import java.util.Objects;

/**
 * Micrometer meters of one {@link SyncEngine}, for any {@link MeterRegistry} — the default engine's too:
 *
 * <pre>{@code
 * new GpuSyncMetrics(GpuSync.defaultEngine()).bindTo(registry);
 * new GpuSyncMetrics(engine).withHistograms().bindTo(prometheusRegistry); // percentile histograms as well
 * }</pre>
 *
 * <p>Every meter carries the tag {@code engine} (the engine's {@link SyncEngine#name() name}) and the tags
 * given to {@link #withTags}; the per-wait meters also carry {@code path}, the {@link WaitPath} in lower case
 * ({@code immediate}, {@code callback}, {@code epoll}, {@code wait_set}, {@code blocking}, {@code probe},
 * {@code spin_then_callback}). The meters (Prometheus names in brackets):
 * <ul>
 *   <li>{@code gpusync.waits.pending} (gauge; {@code gpusync_waits_pending}) — waits started and not yet
 *       terminated;</li>
 *   <li>{@code gpusync.waits} (counter, tags {@code path} and {@code outcome} = {@code completed} |
 *       {@code failed} | {@code timeout} | {@code cancelled}; {@code gpusync_waits_total}) — terminated
 *       waits;</li>
 *   <li>{@code gpusync.waits.device.lost} (function counter; {@code gpusync_waits_device_lost_total}) —
 *       waits that failed because their device or context is gone (a {@link io.gpusync.DeviceLostException}
 *       or any {@link io.gpusync.ErrorKind#FATAL} error; see {@link SyncEngine#health()});</li>
 *   <li>{@code gpusync.wait.duration} (timer, tag {@code path}; {@code gpusync_wait_duration_seconds}) —
 *       subscription → the engine seeing the point signalled, for completed waits;</li>
 *   <li>{@code gpusync.wake.latency} (timer, tag {@code path}; {@code gpusync_wake_latency_seconds}) — the
 *       engine seeing the signal → the subscriber's {@code onComplete} starting (the cost the engine adds
 *       to a wake: hand-offs and any {@code deliverOn} hop).</li>
 * </ul>
 * The timers publish count, total and max; percentile histograms (buckets from 100 ns to 30 s) only after
 * {@link #withHistograms()}, since they multiply the number of time series by about twenty.
 *
 * <p><b>Binding.</b> {@link #bindTo} registers the meters at once and makes the engine update them from
 * then on (earlier waits are not counted). Binding one engine to one registry twice is harmless (the second
 * binding is ignored); binding it to several registries updates each. The engine keeps its bindings for
 * its life; meters of a disposed engine stop changing. Updating the meters costs each wait a few counter
 * increments on the thread that terminates it; an engine bound to no registry pays nothing for metrics.
 *
 * <p>Micrometer is an optional dependency of gpusync: this class needs {@code micrometer-core} on the
 * class or module path; the engine works without it. Instances are immutable and thread-safe.
 */
public final class GpuSyncMetrics implements MeterBinder {
    private final SyncEngine engine;
    private final boolean histograms;
    private final Tags tags;

    /** The meters of {@code engine}, without percentile histograms and without extra tags. */
    public GpuSyncMetrics(SyncEngine engine) {
        this(Objects.requireNonNull(engine, "engine"), false, Tags.empty());
    }

    private GpuSyncMetrics(SyncEngine engine, boolean histograms, Tags tags) {
        this.engine = engine;
        this.histograms = histograms;
        this.tags = tags;
    }

    /** The same meters, with the two timers also publishing percentile histograms. */
    public GpuSyncMetrics withHistograms() {
        return new GpuSyncMetrics(engine, true, tags);
    }

    /** The same meters, each also carrying {@code extraTags} (e.g. an application name). */
    public GpuSyncMetrics withTags(Iterable<Tag> extraTags) {
        return new GpuSyncMetrics(engine, histograms, tags.and(Objects.requireNonNull(extraTags, "extraTags")));
    }

    /** Registers the engine's meters with {@code registry} and starts updating them; see the class docs. */
    @Override
    public void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        engine.bindMetrics(registry, () -> new MicrometerMetrics(registry, engine, histograms, tags));
    }

    @Override
    public String toString() {
        return "GpuSyncMetrics[" + engine.name() + (histograms ? ", histograms" : "") + "]";
    }
}
