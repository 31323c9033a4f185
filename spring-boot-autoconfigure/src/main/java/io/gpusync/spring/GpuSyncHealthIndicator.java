package io.gpusync.spring;

import io.gpusync.reactor.EngineHealth;
import io.gpusync.reactor.SyncEngine;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * The health of a {@link SyncEngine}, from {@link SyncEngine#health()}, for a readiness group — never for
 * liveness:
 * <ul>
 *   <li>{@code UP} with the details {@code engine} (its name), {@code pendingWaits} and
 *       {@code deviceLostFailures} while it serves waits;</li>
 *   <li>{@code DOWN} for the device-lost window ({@code gpusync.health.device-lost-window}, 1 minute by
 *       default) after the last wait that failed because its device or context was lost (a
 *       {@link io.gpusync.DeviceLostException} or any {@link io.gpusync.ErrorKind#FATAL} error), with the count,
 *       the last such error ({@code lastDeviceLost}: class and message), when it happened
 *       ({@code lastDeviceLostAt}) and when the indicator turns {@code UP} again unless another loss comes
 *       ({@code downUntil}). The waits it failed have already reported the fault; the window keeps traffic
 *       away while the application replaces the device. Afterwards it is {@code UP} again, the details still
 *       counting the losses. A zero window reports losses in the details only;</li>
 *   <li>{@code DOWN} with {@code reason = engine disposed} once the engine is disposed (for good).</li>
 * </ul>
 * Put it in the readiness group ({@code management.endpoint.health.group.readiness.include=readinessState,gpusync});
 * a liveness probe that included it would restart an application for a fault that a restart does not mend.
 *
 * <p>Thread-safe; {@link #health()} never blocks (a few volatile reads) and never throws.
 */
public final class GpuSyncHealthIndicator implements HealthIndicator {
    private final SyncEngine engine;
    private final Duration deviceLostWindow;
    private final Clock clock;

    /** Reports on {@code engine}, {@code DOWN} for 1 minute after each device loss. */
    public GpuSyncHealthIndicator(SyncEngine engine) {
        this(engine, Duration.ofMinutes(1));
    }

    /** Reports on {@code engine}, {@code DOWN} for {@code deviceLostWindow} after each device loss. */
    public GpuSyncHealthIndicator(SyncEngine engine, Duration deviceLostWindow) {
        this(engine, deviceLostWindow, Clock.systemUTC());
    }

    GpuSyncHealthIndicator(SyncEngine engine, Duration deviceLostWindow, Clock clock) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.deviceLostWindow = Objects.requireNonNull(deviceLostWindow, "deviceLostWindow");
        if (deviceLostWindow.isNegative()) {
            throw new IllegalArgumentException("deviceLostWindow must not be negative, was " + deviceLostWindow);
        }
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public Health health() {
        EngineHealth state = engine.health();
        Instant downUntil = DeviceLossReadiness.downUntil(state, deviceLostWindow);
        boolean lostRecently = downUntil != null && clock.instant().isBefore(downUntil);
        Health.Builder health = lostRecently || state.disposed() ? Health.down() : Health.up();
        health.withDetail("engine", state.engine())
                .withDetail("pendingWaits", state.pendingWaits())
                .withDetail("deviceLostFailures", state.deviceLostFailures());
        if (state.lastDeviceLost() != null) {
            health.withDetail("lastDeviceLost", state.lastDeviceLost().getClass().getSimpleName() + ": "
                    + state.lastDeviceLost().getMessage());
            health.withDetail("lastDeviceLostAt", state.lastDeviceLostAt().toString());
        }
        if (lostRecently) {
            health.withDetail("downUntil", downUntil.toString());
        }
        if (state.disposed()) {
            health.withDetail("reason", "engine disposed");
        }
        return health.build();
    }

}
