package io.gpusync.spring;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.reactor.SyncEngine;
import io.netty.channel.EventLoopGroup;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.resources.LoopResources;

/**
 * The engine on a Reactor Netty server's event loops: the loops Spring Boot's {@code NettyWebServer} runs on
 * ({@code ReactorResourceFactory.getLoopResources()}, native when Reactor Netty prefers native transports).
 * Loops the engine cannot share (NIO ones, where native epoll is unavailable) leave it with loops of its own,
 * and a warning in the log.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ReactorResourceFactory.class, LoopResources.class})
@ConditionalOnBean(ReactorResourceFactory.class)
@ConditionalOnBooleanProperty(name = "gpusync.share-server-loops", matchIfMissing = true)
class ServerLoopsEngineConfiguration {

    private static final Log LOG = LogFactory.getLog(ServerLoopsEngineConfiguration.class);

    @Bean(destroyMethod = "dispose")
    @ConditionalOnMissingBean
    SyncEngine gpuSyncEngine(GpuSyncProperties properties, ReactorResourceFactory resources,
                             ObjectProvider<GpuSyncObservationConfiguration.EngineObservations> observations) {
        EventLoopGroup loops = resources.getLoopResources().onServer(LoopResources.DEFAULT_NATIVE);
        SyncEngine.Builder builder = GpuSyncAutoConfiguration.configured(properties, observations);
        try {
            builder.eventLoopGroup(loops);
        } catch (SyncNotSupportedException notShareable) {
            // NIO loops (no native epoll: macOS, reactor.netty.native=false): the app still starts, on loops
            // of the engine's own
            LOG.warn("gpusync: the engine cannot share the WebFlux server's event loops (" + notShareable.getMessage()
                    + "); it runs on " + properties.eventLoopThreads() + " loop(s) of its own instead."
                    + " Set gpusync.share-server-loops=false to silence this.");
            builder.eventLoopThreads(properties.eventLoopThreads());
        }
        return builder.build();
    }
}
