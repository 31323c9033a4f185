package io.gpusync.spring;

import io.gpusync.reactor.EngineHealth;
import io.gpusync.reactor.SyncEngine;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

/**
 * Sets the application's {@link ReadinessState} to {@code REFUSING_TRAFFIC} while the engine is inside a
 * device-lost window ({@code gpusync.health.*}) and back to {@code ACCEPTING_TRAFFIC} when the window ends with
 * no new loss — only a refusal it published itself is lifted. Liveness is never touched. The engine's health is
 * read once a second on {@code Schedulers.parallel()} (a few volatile reads, no thread of its own); a check never
 * blocks. It needs nothing of {@code spring-boot-health}: it works in an application without Actuator too.
 * Thread-safe.
 */
final class DeviceLossReadiness implements SmartLifecycle {
    private static final long CHECK_MILLIS = 1_000;

    private final SyncEngine engine;
    private final Duration window;
    private final ApplicationEventPublisher publisher;
    private final Clock clock;
    private volatile Disposable checks;
    /** Whether the current refusal is this object's; only the check task writes it after start. */
    private boolean refusing;

    DeviceLossReadiness(SyncEngine engine, Duration window, ApplicationEventPublisher publisher, Clock clock) {
        this.engine = engine;
        this.window = window;
        this.publisher = publisher;
        this.clock = clock;
    }

    /** One check: publishes a readiness change when the engine entered or left a device-lost window. */
    synchronized void check() {
        Instant until = downUntil(engine.health(), window);
        boolean lost = until != null && clock.instant().isBefore(until);
        if (lost && !refusing) {
            refusing = true;
            AvailabilityChangeEvent.publish(publisher, this, ReadinessState.REFUSING_TRAFFIC);
        } else if (!lost && refusing) {
            refusing = false;
            AvailabilityChangeEvent.publish(publisher, this, ReadinessState.ACCEPTING_TRAFFIC);
        }
    }

    /**
     * The end of the device-lost window of {@code state}'s last loss, or {@code null} if none applies; shared with
     * {@link GpuSyncHealthIndicator}, and here so that this class never loads it (without spring-boot-health it
     * cannot load).
     */
    static Instant downUntil(EngineHealth state, Duration window) {
        if (state.lastDeviceLostAt() == null || window.isZero()) {
            return null;
        }
        return state.lastDeviceLostAt().plus(window);
    }

    @Override
    public void start() {
        checks = Schedulers.parallel().schedulePeriodically(this::check, CHECK_MILLIS, CHECK_MILLIS,
                TimeUnit.MILLISECONDS);
    }

    @Override
    public void stop() {
        Disposable c = checks;
        if (c != null) {
            c.dispose();
            checks = null;
        }
    }

    @Override
    public boolean isRunning() {
        return checks != null;
    }
}
