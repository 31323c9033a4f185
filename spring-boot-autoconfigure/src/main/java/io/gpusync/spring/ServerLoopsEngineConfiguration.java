package io.gpusync.spring;

import io.gpusync.reactor.SyncEngine;
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
        // the builder rejects loops it cannot share (Netty 4.1, not epoll) with a SyncNotSupportedException
        // that names the fix; gpusync.share-server-loops=false then gives the engine loops of its own
        return GpuSyncAutoConfiguration.configured(properties)
                .eventLoopGroup(resources.getLoopResources().onServer(LoopResources.DEFAULT_NATIVE))
                .build();
    }
}
