package io.gpusync.spring;

import io.gpusync.reactor.SyncEngine;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Clock;

/**
 * The device-loss readiness (unless {@code gpusync.health.readiness=false}) and, when Spring Boot's health
 * support is on the class path, the health indicator. Two levels for the indicator: the class check must be
 * decided before the nested class's {@code @ConditionalOnEnabledHealthIndicator} (whose condition lives in
 * {@code spring-boot-health}) is loaded.
 */
@Configuration(proxyBeanMethods = false)
class GpuSyncHealthConfiguration {

    @Bean
    @ConditionalOnBooleanProperty(name = "gpusync.health.readiness", matchIfMissing = true)
    DeviceLossReadiness gpusyncDeviceLossReadiness(SyncEngine engine, GpuSyncProperties properties,
                                                   ApplicationEventPublisher publisher) {
        return new DeviceLossReadiness(engine, properties.health().deviceLostWindow(), publisher, Clock.systemUTC());
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    static class Indicators {

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnEnabledHealthIndicator("gpusync")
        static class Indicator {

            @Bean
            @ConditionalOnMissingBean(name = "gpusyncHealthIndicator")
            GpuSyncHealthIndicator gpusyncHealthIndicator(SyncEngine engine, GpuSyncProperties properties) {
                return new GpuSyncHealthIndicator(engine, properties.health().deviceLostWindow());
            }
        }
    }
}
