package io.gpusync.spring;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import java.time.Duration;

/**
 * The {@code gpusync.*} configuration properties of the auto-configured {@link io.gpusync.reactor.SyncEngine}.
 * Values are checked when the engine is built: one out of range (a thread count below 1, a negative spin
 * budget) fails the application context at startup with the builder's {@link IllegalArgumentException}.
 *
 * <p>Immutable and thread-safe.
 *
 * @param name              Name of the engine: its threads are named gpusync-NAME-… and its meters are tagged
 *                          engine=NAME.
 * @param spinBudget        How long a poller thread spins after activity before parking: longer gives faster
 *                          wakes for imminent completions and uses more CPU.
 * @param waiterThreads     Most platform threads blocked in native waits at once; further blocking waits are
 *                          probed by the poller threads instead.
 * @param eventLoopThreads  Threads of the engine's own event loop group; used only when the engine does not
 *                          share a WebFlux server's loops.
 * @param shareServerLoops  Whether, in a reactive web application on Reactor Netty, the engine runs its fd
 *                          watches and callback hand-offs on the server's event loops instead of loops of its
 *                          own.
 * @param histograms        Whether the wait-duration and wake-latency timers publish percentile histograms
 *                          (many time series per engine: off by default).
 * @param observations      The engine's observations of its waits.
 */
@ConfigurationProperties("gpusync")
public record GpuSyncProperties(
        @DefaultValue("spring") String name,
        @DefaultValue("50us") Duration spinBudget,
        @DefaultValue("16") int waiterThreads,
        @DefaultValue("1") int eventLoopThreads,
        @DefaultValue("true") boolean shareServerLoops,
        @DefaultValue("false") boolean histograms,
        @DefaultValue Observations observations) {

    /**
     * The {@code gpusync.observations.*} properties.
     *
     * @param enabled Whether the engine observes each wait (a gpusync.wait observation: a span under the request's
     *                with tracing, a timer with metrics) through the application's ObservationRegistry, when there
     *                is one.
     */
    public record Observations(@DefaultValue("true") boolean enabled) {
    }
}
