package io.gpusync.spring;

import io.gpusync.reactor.SyncEngine;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The engine with {@code gpusync.event-loop-threads} event loops of its own. */
@Configuration(proxyBeanMethods = false)
class StandaloneEngineConfiguration {

    @Bean(destroyMethod = "dispose")
    @ConditionalOnMissingBean
    SyncEngine gpuSyncEngine(GpuSyncProperties properties,
                             ObjectProvider<GpuSyncObservationConfiguration.EngineObservations> observations) {
        return GpuSyncAutoConfiguration.configured(properties, observations)
                .eventLoopThreads(properties.eventLoopThreads()).build();
    }
}
