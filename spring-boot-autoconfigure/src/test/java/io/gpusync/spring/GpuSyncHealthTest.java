package io.gpusync.spring;

import io.gpusync.DeviceLostException;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.availability.ApplicationAvailabilityAutoConfiguration;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.LivenessState;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A lost device makes the application unready for the device-lost window, never not live, and it recovers once a
 * window passes with no new loss (README, "Health follows Spring Boot's liveness and readiness").
 */
class GpuSyncHealthTest {
    private final ApplicationContextRunner app = new ApplicationContextRunner().withConfiguration(
            AutoConfigurations.of(ApplicationAvailabilityAutoConfiguration.class, GpuSyncAutoConfiguration.class));

    /** A clock the test moves. */
    static final class TestClock extends Clock {
        volatile Instant now = Instant.now();

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    private static void loseTheDevice(SyncEngine engine) throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        CompletableFuture<Void> wait = engine.await(timeline.at(1), Duration.ofMinutes(1)).toFuture();
        timeline.fail(new IllegalStateException("fell off the bus"));
        assertThatThrownBy(() -> wait.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(DeviceLostException.class);
    }

    @Test
    void theIndicatorIsDownForTheWindowAfterTheLastDeviceLossThenUpAgainStillCountingIt() throws Exception {
        SyncEngine engine = GpuSync.builder().name("lossy").build();
        try {
            TestClock clock = new TestClock();
            GpuSyncHealthIndicator indicator = new GpuSyncHealthIndicator(engine, Duration.ofMinutes(2), clock);
            assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);

            loseTheDevice(engine);
            clock.now = engine.health().lastDeviceLostAt().plusSeconds(119);
            Health during = indicator.health();
            assertThat(during.getStatus()).isEqualTo(Status.DOWN);
            assertThat(during.getDetails()).containsEntry("deviceLostFailures", 1L).containsKeys("downUntil",
                    "lastDeviceLost", "lastDeviceLostAt");

            clock.now = engine.health().lastDeviceLostAt().plusSeconds(120);
            Health after = indicator.health();
            assertThat(after.getStatus()).isEqualTo(Status.UP);
            assertThat(after.getDetails()).containsEntry("deviceLostFailures", 1L).containsKey("lastDeviceLost")
                    .doesNotContainKey("downUntil");

            loseTheDevice(engine); // a new loss opens a new window
            clock.now = engine.health().lastDeviceLostAt();
            assertThat(indicator.health().getStatus()).isEqualTo(Status.DOWN);
            assertThat(indicator.health().getDetails()).containsEntry("deviceLostFailures", 2L);
        } finally {
            engine.dispose();
        }
    }

    @Test
    void aZeroWindowReportsLossesInTheDetailsOnly() throws Exception {
        SyncEngine engine = GpuSync.builder().name("zero-window").build();
        try {
            GpuSyncHealthIndicator indicator = new GpuSyncHealthIndicator(engine, Duration.ZERO);
            loseTheDevice(engine);
            assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
            assertThat(indicator.health().getDetails()).containsEntry("deviceLostFailures", 1L);
        } finally {
            engine.dispose();
        }
    }

    @Test
    void aDeviceLossMakesTheApplicationUnreadyButStillLiveAndReadyAgainAfterTheWindow() {
        app.withPropertyValues("gpusync.health.readiness=false").run(context -> { // only this test's check runs
            SyncEngine engine = context.getBean(SyncEngine.class);
            ApplicationAvailability availability = context.getBean(ApplicationAvailability.class);
            AvailabilityChangeEvent.publish(context, LivenessState.CORRECT); // as SpringApplication does once started
            AvailabilityChangeEvent.publish(context, ReadinessState.ACCEPTING_TRAFFIC);
            TestClock clock = new TestClock();
            DeviceLossReadiness readiness = new DeviceLossReadiness(engine, Duration.ofMinutes(2), context, clock);

            readiness.check();
            assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.ACCEPTING_TRAFFIC);

            loseTheDevice(engine);
            clock.now = engine.health().lastDeviceLostAt().plusSeconds(1);
            readiness.check();
            assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.REFUSING_TRAFFIC);
            assertThat(availability.getLivenessState()).isEqualTo(LivenessState.CORRECT);

            clock.now = engine.health().lastDeviceLostAt().plus(Duration.ofMinutes(2));
            readiness.check();
            assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.ACCEPTING_TRAFFIC);
            assertThat(availability.getLivenessState()).isEqualTo(LivenessState.CORRECT);
        });
    }

    @Test
    void theAutoConfiguredReadinessWatchRunsWithTheContextAndCanBeTurnedOff() {
        app.run(context -> assertThat(context.getBean(DeviceLossReadiness.class).isRunning()).isTrue());
        app.withPropertyValues("gpusync.health.readiness=false")
                .run(context -> assertThat(context).doesNotHaveBean(DeviceLossReadiness.class));
    }

    @Test
    void withoutSpringBootHealthTheReadinessWatchStillRunsItsChecks() {
        app.withClassLoader(new FilteredClassLoader(HealthIndicator.class)).run(context -> {
            assertThat(context).doesNotHaveBean(GpuSyncHealthIndicator.class);
            DeviceLossReadiness readiness = context.getBean(DeviceLossReadiness.class);
            loseTheDevice(context.getBean(SyncEngine.class));
            readiness.check(); // would fail with NoClassDefFoundError if it touched the indicator's class
            assertThat(context.getBean(ApplicationAvailability.class).getReadinessState())
                    .isEqualTo(ReadinessState.REFUSING_TRAFFIC);
        });
    }

    @Test
    void theIndicatorUsesTheConfiguredWindow() {
        app.withPropertyValues("gpusync.health.device-lost-window=0s").run(context -> {
            SyncEngine engine = context.getBean(SyncEngine.class);
            loseTheDevice(engine);
            assertThat(context.getBean(GpuSyncHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
        });
    }
}
