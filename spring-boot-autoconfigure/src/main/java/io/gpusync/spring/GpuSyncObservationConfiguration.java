package io.gpusync.spring;

import io.gpusync.reactor.GpuSyncWaitObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The engine's {@code gpusync.wait} observations, when Micrometer's observation API is on the class path: the
 * auto-configured engine observes its waits through the application's {@link ObservationRegistry} (the one
 * Spring Boot's observation support defines), with the application's {@link GpuSyncWaitObservationConvention}
 * bean if there is one; {@code gpusync.observations.enabled=false} turns it off.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(ObservationRegistry.class)
class GpuSyncObservationConfiguration {

    @Bean
    EngineObservations gpuSyncEngineObservations(ObjectProvider<ObservationRegistry> registry,
                                                 ObjectProvider<GpuSyncWaitObservationConvention> convention) {
        return new EngineObservations(registry, convention);
    }

    /**
     * Hands the registry (and convention) to the engine's builder; a bean so that the engine's definitions name no
     * Micrometer type (they work without it on the class path). Looked up when the engine is built.
     */
    static final class EngineObservations {
        private final ObjectProvider<ObservationRegistry> registry;
        private final ObjectProvider<GpuSyncWaitObservationConvention> convention;

        EngineObservations(ObjectProvider<ObservationRegistry> registry,
                           ObjectProvider<GpuSyncWaitObservationConvention> convention) {
            this.registry = registry;
            this.convention = convention;
        }

        void applyTo(io.gpusync.reactor.SyncEngine.Builder builder) {
            ObservationRegistry observations = registry.getIfUnique();
            if (observations == null) {
                return;
            }
            builder.observationRegistry(observations);
            convention.ifUnique(builder::observationConvention);
        }
    }
}
