package io.gpusync.spring;

import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/**
 * Auto-configuration of a {@link SyncEngine} bean (named {@code gpuSyncEngine}), unless the application defines
 * its own {@code SyncEngine}:
 * <ul>
 *   <li>in a reactive web application with a {@code ReactorResourceFactory} (Spring WebFlux on Reactor Netty),
 *       the engine runs on the server's event loops ({@code LoopResources.onServer}): fd completions and
 *       driver-callback hand-offs share the loops that serve requests, and the engine starts no loops of its
 *       own ({@code gpusync.share-server-loops=false} turns this off);</li>
 *   <li>otherwise it is a standalone engine with {@code gpusync.event-loop-threads} loops of its own.</li>
 * </ul>
 * The engine is configured from {@link GpuSyncProperties} and disposed when the context closes (pending waits
 * then fail with {@link io.gpusync.SyncCancelledException}; shared server loops are left running). With
 * {@code spring-boot-health} on the class path a {@link GpuSyncHealthIndicator} named {@code gpusync} reports on
 * whichever {@code SyncEngine} the context holds ({@code management.health.gpusync.enabled=false} turns it off);
 * with Micrometer on the class path a {@link io.gpusync.reactor.GpuSyncMetrics} bean (a {@code MeterBinder})
 * publishes its meters to every registry Spring Boot manages; with Micrometer's observation API on the class path
 * the engine observes each wait ({@code gpusync.wait}, a span under the request's with tracing) through the
 * application's {@code ObservationRegistry} ({@code gpusync.observations.enabled=false} turns it off).
 */
@AutoConfiguration(afterName = "org.springframework.boot.reactor.netty.autoconfigure.NettyReactiveWebServerAutoConfiguration")
@EnableConfigurationProperties(GpuSyncProperties.class)
// in this order: the first engine definition whose conditions match wins
@Import({ServerLoopsEngineConfiguration.class, StandaloneEngineConfiguration.class, GpuSyncMetricsConfiguration.class,
        GpuSyncHealthConfiguration.class, GpuSyncObservationConfiguration.class})
public final class GpuSyncAutoConfiguration {

    GpuSyncAutoConfiguration() {
    }

    /** The builder with every property but the event loops applied, and the observations unless turned off. */
    static SyncEngine.Builder configured(GpuSyncProperties properties,
                                         ObjectProvider<GpuSyncObservationConfiguration.EngineObservations> observations) {
        SyncEngine.Builder builder = GpuSync.builder()
                .name(properties.name())
                .spinBudget(properties.spinBudget())
                .waiterThreads(properties.waiterThreads());
        if (properties.observations().enabled()) {
            observations.ifAvailable(o -> o.applyTo(builder));
        }
        return builder;
    }
}
