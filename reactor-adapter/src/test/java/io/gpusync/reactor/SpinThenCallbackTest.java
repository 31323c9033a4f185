package io.gpusync.reactor;

import io.gpusync.cpu.CpuTimeline;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Cheap probes are spun on for the spin budget, then handed to the callback path. */
class SpinThenCallbackTest {

    @Test
    void aCompletionWithinTheSpinBudgetIsSeenByThePollerAndALaterOneByTheCallback() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SyncEngine engine = GpuSync.builder().name("spin").spinBudget(Duration.ofMillis(200))
                .meterRegistry(registry).build();
        try {
            CpuTimeline timeline = new CpuTimeline();
            // signalled while the poller spins: completed on the probe side
            StepVerifier.create(engine.await(HostWaiters.cheapProbeWithCallback(timeline.at(1)), Duration.ofSeconds(5)))
                    .then(() -> timeline.signal(1))
                    .verifyComplete();
            assertThat(completed(registry, "spin_then_callback")).isEqualTo(1);

            // signalled long after the budget: the wait has moved to the callback path, no thread spins for it
            StepVerifier.create(engine.await(HostWaiters.cheapProbeWithCallback(timeline.at(2)), Duration.ofSeconds(5)))
                    .expectSubscription()
                    .expectNoEvent(Duration.ofMillis(400))
                    .then(() -> assertThat(timeline.pendingWaits()).isEqualTo(1)) // the callback registration
                    .then(() -> timeline.signal(2))
                    .verifyComplete();
            assertThat(completed(registry, "callback")).isEqualTo(1);
            assertThat(engine.pendingWaits()).isZero();
        } finally {
            engine.dispose();
        }
    }

    @Test
    void underTheLowCpuPolicyAWaitGoesToItsCallbackAtOnceAndNoPollerProbesIt() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SyncEngine engine = GpuSync.builder().name("low-cpu").waitPolicy(WaitPolicy.LOW_CPU)
                .meterRegistry(registry).build();
        try {
            CpuTimeline timeline = new CpuTimeline();
            StepVerifier.create(engine.await(HostWaiters.cheapProbeWithCallback(timeline.at(1)), Duration.ofSeconds(5)))
                    .expectSubscription()
                    .then(() -> assertThat(timeline.pendingWaits()).as("its callback, registered at subscription")
                            .isEqualTo(1))
                    .expectNoEvent(Duration.ofMillis(100))
                    .then(() -> assertThat(Thread.getAllStackTraces().keySet()).as("no poller thread was ever needed")
                            .noneMatch(t -> t.getName().startsWith("gpusync-low-cpu-poller")))
                    .then(() -> timeline.signal(1))
                    .verifyComplete();
            assertThat(completed(registry, "callback")).isEqualTo(1);
        } finally {
            engine.dispose();
        }
    }

    @Test
    void theLowLatencyPolicyIsTheDefaultSpinBudget() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SyncEngine engine = GpuSync.builder().name("low-latency").waitPolicy(WaitPolicy.LOW_CPU)
                .waitPolicy(WaitPolicy.LOW_LATENCY).meterRegistry(registry).build();
        try {
            CpuTimeline timeline = new CpuTimeline();
            StepVerifier.create(engine.await(HostWaiters.cheapProbeWithCallback(timeline.at(1)), Duration.ofSeconds(5)))
                    .then(() -> timeline.signal(1))
                    .verifyComplete();
            assertThat(registry.get("gpusync.waits").tag("path", "spin_then_callback").counters()).isNotEmpty();
        } finally {
            engine.dispose();
        }
    }

    private static double completed(SimpleMeterRegistry registry, String path) {
        return registry.get("gpusync.waits").tag("path", path).tag("outcome", "completed").counter().count();
    }
}
