package io.gpusync.spring;

import io.gpusync.DeviceLostException;
import io.gpusync.SyncCancelledException;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.reactor.DefaultGpuSyncWaitObservationConvention;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.GpuSyncWaitObservationConvention;
import io.gpusync.reactor.SyncEngine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import org.junit.jupiter.api.Test;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.resources.LoopResources;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.gpusync.spring.EngineThreadsProbe.epollCompletionThread;
import static io.gpusync.spring.EngineThreadsProbe.threadsOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GpuSyncAutoConfigurationTest {
    private static final AutoConfigurations BOOT_METRICS = AutoConfigurations.of(MetricsAutoConfiguration.class,
            CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class);

    private final ApplicationContextRunner plain = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GpuSyncAutoConfiguration.class));
    private final ReactiveWebApplicationContextRunner reactiveWeb = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(GpuSyncAutoConfiguration.class));

    @Test
    void outsideAWebApplicationTheEngineRunsOnLoopsOfItsOwn() {
        plain.run(context -> {
            SyncEngine engine = context.getBean(SyncEngine.class);
            assertThat(engine.name()).isEqualTo("spring");
            assertThat(epollCompletionThread(engine).getName()).startsWith("gpusync-spring-loop");
        });
    }

    @Test
    void propertiesBindToTheRecordAndConfigureTheEngine() {
        plain.withPropertyValues("gpusync.name=orders", "gpusync.spin-budget=20us", "gpusync.waiter-threads=4",
                        "gpusync.event-loop-threads=2", "gpusync.share-server-loops=false", "gpusync.histograms=true",
                        "gpusync.health.device-lost-window=30s", "gpusync.health.readiness=false",
                        "gpusync.observations.enabled=false")
                .run(context -> {
                    assertThat(context.getBean(GpuSyncProperties.class)).isEqualTo(new GpuSyncProperties(
                            "orders", Duration.ofNanos(20_000), 4, 2, false, true,
                            new GpuSyncProperties.Health(Duration.ofSeconds(30), false),
                            new GpuSyncProperties.Observations(false)));
                    SyncEngine engine = context.getBean(SyncEngine.class);
                    assertThat(engine.name()).isEqualTo("orders");
                    assertThat(epollCompletionThread(engine).getName()).startsWith("gpusync-orders-loop");
                });
    }

    @Test
    void defaultsOfTheProperties() {
        plain.run(context -> assertThat(context.getBean(GpuSyncProperties.class)).isEqualTo(
                new GpuSyncProperties("spring", Duration.ofNanos(50_000), 16, 1, true, false,
                        new GpuSyncProperties.Health(Duration.ofMinutes(1), true),
                        new GpuSyncProperties.Observations(true))));
    }

    @Test
    void aPropertyOutOfRangeFailsTheStartupNamingIt() {
        plain.withPropertyValues("gpusync.waiter-threads=0").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("waiterThreads");
        });
    }

    @Test
    void backsOffForTheApplicationsOwnEngine() {
        SyncEngine own = GpuSync.builder().name("own").build();
        try {
            plain.withBean("myEngine", SyncEngine.class, () -> own).run(context -> {
                assertThat(context).hasSingleBean(SyncEngine.class);
                assertThat(context.getBean(SyncEngine.class)).isSameAs(own);
                assertThat(context.getBean(GpuSyncHealthIndicator.class).health().getDetails())
                        .containsEntry("engine", "own");
            });
        } finally {
            own.dispose();
        }
    }

    @Test
    void closingTheContextDisposesTheEngineAndCancelsItsPendingWaits() {
        AtomicReference<SyncEngine> engine = new AtomicReference<>();
        AtomicReference<CompletableFuture<Void>> pending = new AtomicReference<>();
        CpuTimeline never = new CpuTimeline();
        plain.run(context -> {
            engine.set(context.getBean(SyncEngine.class));
            pending.set(engine.get().await(never.at(1), Duration.ofMinutes(5)).toFuture());
            assertThat(engine.get().isDisposed()).isFalse();
        });
        assertThat(engine.get().isDisposed()).isTrue();
        assertThatThrownBy(() -> pending.get().get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SyncCancelledException.class);
    }

    @Test
    void inAReactiveWebApplicationTheEngineRunsOnTheServersLoops() {
        reactiveWeb.withUserConfiguration(OwnServerLoops.class).run(context -> {
            SyncEngine engine = context.getBean(SyncEngine.class);
            ReactorResourceFactory resources = context.getBean(ReactorResourceFactory.class);
            assertThat(threadsOf(resources.getLoopResources().onServer(LoopResources.DEFAULT_NATIVE)))
                    .contains(epollCompletionThread(engine));
        });
    }

    @Test
    void serverLoopsItCannotShareLeaveTheEngineWithLoopsOfItsOwn() {
        reactiveWeb.withUserConfiguration(NioServerLoops.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(epollCompletionThread(context.getBean(SyncEngine.class)).getName())
                    .startsWith("gpusync-spring-loop");
        });
    }

    @Test
    void sharingTheServersLoopsCanBeTurnedOff() {
        reactiveWeb.withUserConfiguration(OwnServerLoops.class)
                .withPropertyValues("gpusync.share-server-loops=false")
                .run(context -> assertThat(epollCompletionThread(context.getBean(SyncEngine.class)).getName())
                        .startsWith("gpusync-spring-loop"));
    }

    @Test
    void healthIsUpWithTheEngineNameAndItsPendingWaits() {
        plain.withPropertyValues("gpusync.name=healthy").run(context -> {
            SyncEngine engine = context.getBean(SyncEngine.class);
            GpuSyncHealthIndicator indicator = context.getBean("gpusyncHealthIndicator", GpuSyncHealthIndicator.class);
            CpuTimeline timeline = new CpuTimeline();
            CompletableFuture<Void> wait = engine.await(timeline.at(1), Duration.ofMinutes(1)).toFuture();

            Health health = indicator.health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("engine", "healthy").containsEntry("pendingWaits", 1);

            timeline.signal(1);
            wait.get(10, TimeUnit.SECONDS);
            assertThat(indicator.health().getDetails()).containsEntry("pendingWaits", 0);
        });
    }

    @Test
    void healthIsDownOnceTheEngineIsDisposed() {
        plain.run(context -> {
            context.getBean(SyncEngine.class).dispose();
            Health health = context.getBean(GpuSyncHealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.DOWN);
            assertThat(health.getDetails()).containsEntry("reason", "engine disposed");
        });
    }

    @Test
    void healthIsDownOnceAWaitFailedBecauseItsDeviceWasLost() {
        plain.run(context -> {
            SyncEngine engine = context.getBean(SyncEngine.class);
            CpuTimeline timeline = new CpuTimeline();
            CompletableFuture<Void> wait = engine.await(timeline.at(1), Duration.ofMinutes(1)).toFuture();
            timeline.fail(new IllegalStateException("fell off the bus"));
            assertThatThrownBy(() -> wait.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(DeviceLostException.class);

            Health health = context.getBean(GpuSyncHealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.DOWN);
            assertThat(health.getDetails()).containsEntry("deviceLostFailures", 1L)
                    .containsKeys("lastDeviceLost", "lastDeviceLostAt");
            assertThat((String) health.getDetails().get("lastDeviceLost")).startsWith("DeviceLostException");
        });
    }

    @Test
    void metricsAreBoundToTheRegistriesBootManagesWithoutHistogramsByDefault() {
        plain.withConfiguration(BOOT_METRICS).run(context -> {
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            SyncEngine engine = context.getBean(SyncEngine.class);
            CpuTimeline timeline = new CpuTimeline();
            CompletableFuture<Void> wait = engine.await(timeline.at(1), Duration.ofMinutes(1)).toFuture();
            assertThat(registry.get("gpusync.waits.pending").tag("engine", "spring").gauge().value()).isEqualTo(1.0);
            timeline.signal(1);
            wait.get(10, TimeUnit.SECONDS);

            assertThat(registry.get("gpusync.waits.pending").tag("engine", "spring").gauge().value()).isZero();
            assertThat(registry.get("gpusync.waits").tag("engine", "spring").tag("outcome", "completed")
                    .counters().stream().mapToDouble(Counter::count).sum()).isEqualTo(1.0);
        });
    }

    @Test
    void percentileHistogramsAreOptIn() {
        ApplicationContextRunner prometheus = plain.withConfiguration(BOOT_METRICS)
                .withBean(PrometheusMeterRegistry.class, () -> new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
        prometheus.run(context -> assertThat(context.getBean(PrometheusMeterRegistry.class).scrape())
                .contains("gpusync_wait_duration_seconds_count").doesNotContain("gpusync_wait_duration_seconds_bucket"));
        prometheus.withPropertyValues("gpusync.histograms=true").run(context ->
                assertThat(context.getBean(PrometheusMeterRegistry.class).scrape())
                        .contains("gpusync_wait_duration_seconds_bucket", "gpusync_wake_latency_seconds_bucket"));
    }

    @Test
    void withoutMicrometerThereIsAnEngineAndNoMetrics() {
        plain.withClassLoader(new FilteredClassLoader("io.micrometer")).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(SyncEngine.class);
            assertThat(context).doesNotHaveBean("gpuSyncMetrics");
        });
    }

    @Test
    void theEngineObservesItsWaitsThroughTheApplicationsObservationRegistry() {
        plain.withBean(ObservationRegistry.class, TestObservationRegistry::create).run(context -> {
            TestObservationRegistry registry = (TestObservationRegistry) context.getBean(ObservationRegistry.class);
            awaitASignalledPoint(context.getBean(SyncEngine.class));
            TestObservationRegistryAssert.assertThat(registry).hasObservationWithNameEqualTo("gpusync.wait").that()
                    .hasBeenStopped().hasLowCardinalityKeyValue("engine", "spring")
                    .hasLowCardinalityKeyValue("outcome", "completed");
        });
    }

    @Test
    void theApplicationsConventionNamesTheObservations() {
        plain.withBean(ObservationRegistry.class, TestObservationRegistry::create)
                .withBean(GpuSyncWaitObservationConvention.class, () -> new DefaultGpuSyncWaitObservationConvention() {
                    @Override
                    public String getName() {
                        return "gpu.fence";
                    }
                }).run(context -> {
                    TestObservationRegistry registry = (TestObservationRegistry) context.getBean(ObservationRegistry.class);
                    awaitASignalledPoint(context.getBean(SyncEngine.class));
                    TestObservationRegistryAssert.assertThat(registry).hasNumberOfObservationsEqualTo(1)
                            .hasObservationWithNameEqualTo("gpu.fence");
                });
    }

    @Test
    void observationsCanBeTurnedOff() {
        plain.withBean(ObservationRegistry.class, TestObservationRegistry::create)
                .withPropertyValues("gpusync.observations.enabled=false").run(context -> {
                    TestObservationRegistry registry = (TestObservationRegistry) context.getBean(ObservationRegistry.class);
                    awaitASignalledPoint(context.getBean(SyncEngine.class));
                    TestObservationRegistryAssert.assertThat(registry).doesNotHaveAnyObservation();
                });
    }

    @Test
    void withoutMicrometersObservationApiThereIsAnEngineThatWaits() {
        plain.withClassLoader(new FilteredClassLoader("io.micrometer.observation")).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(GpuSyncObservationConfiguration.EngineObservations.class);
            awaitASignalledPoint(context.getBean(SyncEngine.class));
        });
    }

    private static void awaitASignalledPoint(SyncEngine engine) throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        CompletableFuture<Void> wait = engine.await(timeline.at(1), Duration.ofMinutes(1)).toFuture();
        timeline.signal(1);
        wait.get(10, TimeUnit.SECONDS);
    }

    @Test
    void theHealthIndicatorCanBeTurnedOff() {
        plain.withPropertyValues("management.health.gpusync.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(GpuSyncHealthIndicator.class);
            assertThat(context).hasSingleBean(SyncEngine.class);
        });
    }

    @Test
    void withoutSpringBootHealthThereIsAnEngineAndNoIndicator() {
        plain.withClassLoader(new FilteredClassLoader("org.springframework.boot.health")).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(SyncEngine.class);
            assertThat(context).doesNotHaveBean(GpuSyncHealthIndicator.class);
        });
    }

    /** A server on NIO loops (as where native epoll is unavailable), which the engine cannot share. */
    @Configuration(proxyBeanMethods = false)
    static class NioServerLoops {
        @Bean(destroyMethod = "shutdownGracefully")
        EventLoopGroup nioLoops() {
            return new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        }

        @Bean
        ReactorResourceFactory reactorResourceFactory(EventLoopGroup nioLoops) {
            ReactorResourceFactory factory = new ReactorResourceFactory();
            factory.setUseGlobalResources(false);
            factory.setLoopResources(useNative -> nioLoops);
            return factory;
        }
    }

    /** A WebFlux server's resources with loops of their own (not Reactor Netty's global ones). */
    @Configuration(proxyBeanMethods = false)
    static class OwnServerLoops {
        @Bean
        ReactorResourceFactory reactorResourceFactory() {
            ReactorResourceFactory factory = new ReactorResourceFactory();
            factory.setUseGlobalResources(false);
            return factory;
        }
    }
}
