package io.gpusync.spring;

import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.resources.LoopResources;

/**
 * Auto-configuration of a {@link SyncEngine} bean (named {@code gpuSyncEngine}), unless the application defines
 * its own {@code SyncEngine}:
 * <ul>
 *   <li>in a reactive web application with a {@link ReactorResourceFactory} (Spring WebFlux on Reactor Netty),
 *       the engine runs on the server's event loops ({@code LoopResources.onServer}): fd completions and
 *       driver-callback hand-offs share the loops that serve requests, and the engine starts no loops of its
 *       own ({@code gpusync.share-server-loops=false} turns this off);</li>
 *   <li>otherwise it is a standalone engine with {@code gpusync.event-loop-threads} loops of its own.</li>
 * </ul>
 * The engine is configured from {@link GpuSyncProperties} and disposed when the context closes (pending waits
 * then fail with {@link io.gpusync.SyncCancelledException}; shared server loops are left running). With
 * {@code spring-boot-health} on the class path a {@link GpuSyncHealthIndicator} named {@code gpusync} reports on
 * whichever {@code SyncEngine} the context holds ({@code management.health.gpusync.enabled=false} turns it off).
 */
@AutoConfiguration(afterName = "org.springframework.boot.reactor.netty.autoconfigure.NettyReactiveWebServerAutoConfiguration")
@EnableConfigurationProperties(GpuSyncProperties.class)
@Import({GpuSyncAutoConfiguration.ServerLoopsEngine.class, GpuSyncAutoConfiguration.StandaloneEngine.class})
public final class GpuSyncAutoConfiguration {

    GpuSyncAutoConfiguration() {
    }

    /** The builder with every property but the event loops applied. */
    static SyncEngine.Builder configured(GpuSyncProperties properties) {
        return GpuSync.builder()
                .name(properties.name())
                .spinBudget(properties.spinBudget())
                .waiterThreads(properties.waiterThreads());
    }

    /** The engine on a Reactor Netty server's event loops. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    @ConditionalOnClass({ReactorResourceFactory.class, LoopResources.class})
    @ConditionalOnBean(ReactorResourceFactory.class)
    @ConditionalOnBooleanProperty(name = "gpusync.share-server-loops", matchIfMissing = true)
    static class ServerLoopsEngine {

        @Bean(destroyMethod = "dispose")
        @ConditionalOnMissingBean
        SyncEngine gpuSyncEngine(GpuSyncProperties properties, ReactorResourceFactory resources) {
            EventLoopGroup loops = resources.getLoopResources().onServer(LoopResources.DEFAULT_NATIVE);
            return configured(properties).eventLoopGroup(ioLoops(loops)).build();
        }

        private static IoEventLoopGroup ioLoops(EventLoopGroup loops) {
            if (loops instanceof IoEventLoopGroup io) {
                return io;
            }
            throw new IllegalStateException("gpusync shares the WebFlux server's event loops only when they are"
                    + " a Netty 4.2 IoEventLoopGroup (reactor-netty 1.3); the server's loops are a "
                    + loops.getClass().getName() + ". Set gpusync.share-server-loops=false to give the engine"
                    + " loops of its own.");
        }
    }

    /** The engine with event loops of its own. */
    @Configuration(proxyBeanMethods = false)
    static class StandaloneEngine {

        @Bean(destroyMethod = "dispose")
        @ConditionalOnMissingBean
        SyncEngine gpuSyncEngine(GpuSyncProperties properties) {
            return configured(properties).eventLoopThreads(properties.eventLoopThreads()).build();
        }
    }

    /** The health indicator, when Spring Boot's health support is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnEnabledHealthIndicator("gpusync")
    static class HealthIndicatorConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "gpusyncHealthIndicator")
        GpuSyncHealthIndicator gpusyncHealthIndicator(SyncEngine engine) {
            return new GpuSyncHealthIndicator(engine);
        }
    }
}
