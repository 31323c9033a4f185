package io.gpusync.reactor;

import io.gpusync.DeviceLostException;
import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link GpuSyncMetrics}: the engine's meters in any registry, histograms opt-in, described; engine health. */
class GpuSyncMetricsTest {

    @Test
    void theEngineCountsPendingCompletedTimedOutAndCancelledWaitsPerPath() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SyncEngine engine = GpuSync.builder().name("metered").build();
        new GpuSyncMetrics(engine).bindTo(registry);
        try {
            CpuTimeline timeline = new CpuTimeline();
            Disposable pending = engine.await(timeline.at(100), SyncPoint.FOREVER).subscribe();
            assertThat(registry.get("gpusync.waits.pending").tag("engine", "metered").gauge().value()).isEqualTo(1.0);
            pending.dispose();
            assertThat(registry.get("gpusync.waits.pending").gauge().value()).isZero();

            StepVerifier.create(engine.await(timeline.at(1), Duration.ofSeconds(5)))
                    .then(() -> timeline.signal(1)).verifyComplete();
            StepVerifier.create(engine.await(timeline.at(2), Duration.ofMillis(10)))
                    .expectError().verify(Duration.ofSeconds(5));

            assertThat(count(registry, "callback", "completed")).isEqualTo(1);
            assertThat(count(registry, "callback", "timeout")).isEqualTo(1);
            assertThat(count(registry, "callback", "cancelled")).isEqualTo(1);
            assertThat(registry.get("gpusync.wait.duration").tag("path", "callback").timer().count()).isEqualTo(1);
            assertThat(registry.get("gpusync.wake.latency").tag("path", "callback").timer().count()).isEqualTo(1);
        } finally {
            engine.dispose();
        }
    }

    @Test
    void theBuildersMeterRegistryBindsTheSameMetersAndBindingTwiceCountsOnce() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SyncEngine engine = GpuSync.builder().name("built-metered").meterRegistry(registry).build();
        new GpuSyncMetrics(engine).bindTo(registry); // already bound through the builder: ignored
        try {
            CpuTimeline timeline = new CpuTimeline();
            timeline.signal(1);
            StepVerifier.create(engine.await(timeline.at(1), Duration.ofSeconds(5))).verifyComplete();
            assertThat(count(registry, "immediate", "completed")).isEqualTo(1);
        } finally {
            engine.dispose();
        }
    }

    @Test
    void theDefaultEngineReportsToAnyRegistry() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new GpuSyncMetrics(GpuSync.defaultEngine()).withTags(Tags.of("app", "test")).bindTo(registry);
        CpuTimeline timeline = new CpuTimeline();
        StepVerifier.create(GpuSync.await(timeline.at(1), Duration.ofSeconds(5)))
                .then(() -> timeline.signal(1)).verifyComplete();
        assertThat(registry.get("gpusync.waits").tag("engine", GpuSync.defaultEngine().name()).tag("app", "test")
                .tag("path", "callback").tag("outcome", "completed").counter().count()).isGreaterThanOrEqualTo(1);
    }

    @Test
    void histogramsAreOptInAndEveryMeterIsDescribed() {
        PrometheusMeterRegistry plain = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        PrometheusMeterRegistry withHistograms = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        SyncEngine engine = GpuSync.builder().name("idle").build();
        try {
            new GpuSyncMetrics(engine).bindTo(plain);
            new GpuSyncMetrics(engine).withHistograms().bindTo(withHistograms);
            long plainLines = lines(plain);
            long histogramLines = lines(withHistograms);
            System.out.printf("idle engine, Prometheus lines: %d without histograms, %d with%n", plainLines,
                    histogramLines);
            assertThat(plainLines).isLessThan(150);
            assertThat(histogramLines).isGreaterThan(5 * plainLines);
            assertThat(plain.scrape()).doesNotContain("# HELP gpusync_waits_total \n")
                    .contains("# HELP gpusync_waits_pending gpusync waits started");
            for (MeterRegistry registry : new MeterRegistry[] {plain, withHistograms}) {
                assertThat(registry.getMeters()).isNotEmpty().allSatisfy(m -> assertThat(m.getId().getDescription())
                        .as(m.getId().toString()).isNotBlank());
            }
            assertThat(plain.getMeters().stream().map(m -> m.getId().getName()).collect(Collectors.toSet()))
                    .containsExactlyInAnyOrder("gpusync.waits.pending", "gpusync.waits", "gpusync.waits.device.lost",
                            "gpusync.wait.duration", "gpusync.wake.latency");
        } finally {
            engine.dispose();
        }
    }

    @Test
    void healthCountsWaitsFailedByALostDevice() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SyncEngine engine = GpuSync.builder().name("lost").meterRegistry(registry).build();
        try {
            assertThat(engine.health().deviceLost()).isFalse();
            CpuTimeline timeline = new CpuTimeline();
            Disposable waiting = engine.await(timeline.at(5), SyncPoint.FOREVER).subscribe(v -> { }, e -> { });
            assertThat(engine.health().pendingWaits()).isEqualTo(1);
            timeline.fail(new DeviceLostException(io.gpusync.BackendKind.CPU, "the GPU fell off the bus"));
            StepVerifier.create(engine.await(timeline.at(6), Duration.ofSeconds(5)))
                    .expectError(DeviceLostException.class).verify(Duration.ofSeconds(5));

            EngineHealth health = engine.health();
            assertThat(waiting.isDisposed()).isTrue();
            assertThat(health.pendingWaits()).isZero();
            assertThat(health.deviceLost()).isTrue();
            assertThat(health.deviceLostFailures()).isEqualTo(2); // the pending wait and the later one
            assertThat(health.lastDeviceLostFailure()).get().isInstanceOf(DeviceLostException.class);
            assertThat(health.lastDeviceLostAt()).isNotNull();
            assertThat(registry.get("gpusync.waits.device.lost").functionCounter().count()).isEqualTo(2);
        } finally {
            engine.dispose();
        }
    }

    private static double count(SimpleMeterRegistry registry, String path, String outcome) {
        return registry.get("gpusync.waits").tag("path", path).tag("outcome", outcome).counter().count();
    }

    private static long lines(PrometheusMeterRegistry registry) {
        return registry.scrape().lines().filter(l -> !l.isBlank()).count();
    }

    @SuppressWarnings("unused")
    private static String describe(Meter m) {
        return m.getId() + ": " + m.getId().getDescription();
    }
}
