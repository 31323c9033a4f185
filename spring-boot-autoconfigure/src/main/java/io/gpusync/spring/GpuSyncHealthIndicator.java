package io.gpusync.spring;

import io.gpusync.reactor.SyncEngine;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import java.util.Objects;

/**
 * The health of a {@link SyncEngine}: {@code UP} with the details {@code engine} (its name) and
 * {@code pendingWaits} while it serves waits; {@code DOWN} once it is disposed.
 *
 * <p>Thread-safe; {@link #health()} never blocks (it reads the engine's counters) and never throws.
 */
public final class GpuSyncHealthIndicator implements HealthIndicator {
    private final SyncEngine engine;

    /** Reports on {@code engine}. */
    public GpuSyncHealthIndicator(SyncEngine engine) {
        this.engine = Objects.requireNonNull(engine, "engine");
    }

    @Override
    public Health health() {
        Health.Builder health = engine.isDisposed()
                ? Health.down().withDetail("reason", "engine disposed")
                : Health.up();
        return health.withDetail("engine", engine.name())
                .withDetail("pendingWaits", engine.pendingWaits())
                .build();
    }
}
