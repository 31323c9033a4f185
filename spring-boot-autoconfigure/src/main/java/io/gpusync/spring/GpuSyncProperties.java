package io.gpusync.spring;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import java.time.Duration;
import java.util.Objects;

/**
 * The {@code gpusync.*} configuration properties of the auto-configured {@link io.gpusync.reactor.SyncEngine}.
 * A negative duration fails the application context at startup with an {@link IllegalArgumentException} that
 * names the property; a thread count below 1 fails it when the engine is built, with the builder's
 * {@code IllegalArgumentException}. README's property table repeats these descriptions word for word.
 *
 * <p>Immutable and thread-safe.
 *
 * @param name             The engine's name: its threads are named gpusync-NAME-… and its meters are tagged
 *                         engine=NAME.
 * @param spinBudget       How long a poller spins after activity before parking, and how long a cheap-probe
 *                         wait is probed before its callback is registered; 0 means no spinning. Must not be
 *                         negative.
 * @param waiterThreads    Most platform threads blocked in native waits at once (the BLOCKING pool's cap);
 *                         further blocking waits are probed by the poller threads instead.
 * @param eventLoopThreads Threads of the engine's own epoll event loops; used only when the engine does not
 *                         share a WebFlux server's loops.
 * @param shareServerLoops Whether, in a WebFlux application on Reactor Netty, the engine runs on the server's
 *                         event loops instead of loops of its own.
 * @param histograms       Whether the wait-duration and wake-latency timers publish percentile histograms
 *                         (many time series per engine).
 * @param health           How a lost device shows in health and readiness.
 * @param observations     The engine's observations of its waits.
 */
@ConfigurationProperties("gpusync")
public record GpuSyncProperties(
        @DefaultValue("spring") String name,
        @DefaultValue("50us") Duration spinBudget,
        @DefaultValue("16") int waiterThreads,
        @DefaultValue("1") int eventLoopThreads,
        @DefaultValue("true") boolean shareServerLoops,
        @DefaultValue("false") boolean histograms,
        @DefaultValue Health health,
        @DefaultValue Observations observations) {

    /** Checks the durations, naming the property of a bad one. */
    public GpuSyncProperties {
        requireNotNegative("gpusync.spin-budget", spinBudget);
        Objects.requireNonNull(health, "health");
        Objects.requireNonNull(observations, "observations");
    }

    /**
     * The {@code gpusync.health.*} properties: what a wait that failed because its device or context was lost
     * (a {@link io.gpusync.DeviceLostException} or another {@link io.gpusync.ErrorKind#FATAL} error) does to the
     * application's health and readiness. It never touches liveness: the fault is already reported to the
     * waits it failed, and restarting the application would not bring the device back sooner.
     *
     * @param deviceLostWindow How long the gpusync health indicator reports DOWN, and the application refuses
     *                         traffic, after the last wait that failed because its device was lost; 0 reports
     *                         losses in the details only.
     * @param readiness        Whether a device loss also sets the application's readiness state to
     *                         REFUSING_TRAFFIC for the device-lost window (never its liveness state).
     */
    public record Health(@DefaultValue("1m") Duration deviceLostWindow, @DefaultValue("true") boolean readiness) {

        /** Checks the window, naming the property if it is negative. */
        public Health {
            requireNotNegative("gpusync.health.device-lost-window", deviceLostWindow);
        }
    }

    /**
     * The {@code gpusync.observations.*} properties.
     *
     * @param enabled Whether the engine observes each wait (a gpusync.wait observation: a span under the request's
     *                with tracing, a timer with metrics) through the application's ObservationRegistry, when there
     *                is one.
     */
    public record Observations(@DefaultValue("true") boolean enabled) {
    }

    private static void requireNotNegative(String property, Duration value) {
        Objects.requireNonNull(value, property);
        if (value.isNegative()) {
            throw new IllegalArgumentException(property + " must not be negative, was " + value);
        }
    }
}
