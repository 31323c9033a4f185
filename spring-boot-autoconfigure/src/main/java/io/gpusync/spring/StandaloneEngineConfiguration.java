package io.gpusync.spring;

import io.gpusync.reactor.SyncEngine;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The engine with {@code gpusync.event-loop-threads} event loops of its own. */
@Configuration(proxyBeanMethods = false)
class StandaloneEngineConfiguration {

    @Bean(destroyMethod = "dispose")
    @ConditionalOnMissingBean
    SyncEngine gpuSyncEngine(GpuSyncProperties properties) {
        return GpuSyncAutoConfiguration.configured(properties).eventLoopThreads(properties.eventLoopThreads()).build();
    }
}
