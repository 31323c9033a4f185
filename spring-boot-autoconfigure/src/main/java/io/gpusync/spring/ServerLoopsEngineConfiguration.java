package io.gpusync.spring;

import io.gpusync.reactor.SyncEngine;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
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
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({ReactorResourceFactory.class, LoopResources.class})
@ConditionalOnBean(ReactorResourceFactory.class)
@ConditionalOnBooleanProperty(name = "gpusync.share-server-loops", matchIfMissing = true)
class ServerLoopsEngineConfiguration {

    @Bean(destroyMethod = "dispose")
    @ConditionalOnMissingBean
    SyncEngine gpuSyncEngine(GpuSyncProperties properties, ReactorResourceFactory resources) {
        EventLoopGroup loops = resources.getLoopResources().onServer(LoopResources.DEFAULT_NATIVE);
        return GpuSyncAutoConfiguration.configured(properties).eventLoopGroup(ioLoops(loops)).build();
    }

    private static IoEventLoopGroup ioLoops(EventLoopGroup loops) {
        if (loops instanceof IoEventLoopGroup io) {
            return io;
        }
        throw new IllegalStateException("gpusync shares the WebFlux server's event loops only when they are a"
                + " Netty 4.2 IoEventLoopGroup (reactor-netty 1.3); the server's loops are a "
                + loops.getClass().getName() + ". Set gpusync.share-server-loops=false to give the engine loops"
                + " of its own.");
    }
}
