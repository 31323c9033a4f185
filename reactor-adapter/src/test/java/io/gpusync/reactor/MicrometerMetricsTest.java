package io.gpusync.reactor;

import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class MicrometerMetricsTest {

    @Test
    void theEngineCountsPendingCompletedTimedOutAndCancelledWaitsPerPath() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SyncEngine engine = GpuSync.builder().name("metered").meterRegistry(registry).build();
        try {
            CpuTimeline timeline = new CpuTimeline();
            Disposable pending = engine.await(timeline.at(100), SyncPoint.FOREVER).subscribe();
            assertThat(registry.get("gpusync.waits.pending").gauge().value()).isEqualTo(1.0);
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

    private static double count(SimpleMeterRegistry registry, String path, String outcome) {
        return registry.get("gpusync.waits").tag("path", path).tag("outcome", outcome).counter().count();
    }
}
