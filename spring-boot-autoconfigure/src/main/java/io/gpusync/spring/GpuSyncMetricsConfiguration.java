package io.gpusync.spring;

import io.gpusync.reactor.GpuSyncMetrics;
import io.gpusync.reactor.SyncEngine;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The engine's meters as a {@link MeterBinder} bean, when Micrometer is on the class path: Spring Boot's
 * metrics support binds it to every registry it manages. Histograms only with {@code gpusync.histograms=true}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(MeterBinder.class)
class GpuSyncMetricsConfiguration {

    @Bean
    @ConditionalOnMissingBean(GpuSyncMetrics.class)
    GpuSyncMetrics gpuSyncMetrics(SyncEngine engine, GpuSyncProperties properties) {
        GpuSyncMetrics metrics = new GpuSyncMetrics(engine);
        return properties.histograms() ? metrics.withHistograms() : metrics;
    }
}
