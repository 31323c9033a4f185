package io.gpusync.spring;

import io.gpusync.reactor.EngineHealth;
import io.gpusync.reactor.SyncEngine;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import java.util.Objects;

/**
 * The health of a {@link SyncEngine}, from {@link SyncEngine#health()}:
 * <ul>
 *   <li>{@code UP} with the details {@code engine} (its name), {@code pendingWaits} and
 *       {@code deviceLostFailures} (0) while it serves waits;</li>
 *   <li>{@code DOWN} once any wait has failed because its device or context was lost (a
 *       {@link io.gpusync.DeviceLostException} or any {@link io.gpusync.ErrorKind#FATAL} error), with the
 *       count, the last such error ({@code lastDeviceLost}: class and message) and when it happened
 *       ({@code lastDeviceLostAt}). It stays {@code DOWN}: a lost device does not come back, and the
 *       application has to rebuild what used it (restart the instance);</li>
 *   <li>{@code DOWN} with {@code reason = engine disposed} once the engine is disposed.</li>
 * </ul>
 *
 * <p>Thread-safe; {@link #health()} never blocks (a few volatile reads) and never throws.
 */
public final class GpuSyncHealthIndicator implements HealthIndicator {
    private final SyncEngine engine;

    /** Reports on {@code engine}. */
    public GpuSyncHealthIndicator(SyncEngine engine) {
        this.engine = Objects.requireNonNull(engine, "engine");
    }

    @Override
    public Health health() {
        EngineHealth state = engine.health();
        Health.Builder health = state.deviceLost() || state.disposed() ? Health.down() : Health.up();
        health.withDetail("engine", state.engine())
                .withDetail("pendingWaits", state.pendingWaits())
                .withDetail("deviceLostFailures", state.deviceLostFailures());
        if (state.lastDeviceLost() != null) {
            health.withDetail("lastDeviceLost", state.lastDeviceLost().getClass().getSimpleName() + ": "
                    + state.lastDeviceLost().getMessage());
            health.withDetail("lastDeviceLostAt", state.lastDeviceLostAt().toString());
        }
        if (state.disposed()) {
            health.withDetail("reason", "engine disposed");
        }
        return health.build();
    }
}
