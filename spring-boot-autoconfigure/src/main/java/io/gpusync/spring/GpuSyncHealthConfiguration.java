package io.gpusync.spring;

import io.gpusync.reactor.SyncEngine;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The health indicator, when Spring Boot's health support is on the class path. Two levels: the class check
 * must be decided before the nested class's {@code @ConditionalOnEnabledHealthIndicator} (whose condition
 * lives in {@code spring-boot-health}) is loaded.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(HealthIndicator.class)
class GpuSyncHealthConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnEnabledHealthIndicator("gpusync")
    static class Indicator {

        @Bean
        @ConditionalOnMissingBean(name = "gpusyncHealthIndicator")
        GpuSyncHealthIndicator gpusyncHealthIndicator(SyncEngine engine) {
            return new GpuSyncHealthIndicator(engine);
        }
    }
}
