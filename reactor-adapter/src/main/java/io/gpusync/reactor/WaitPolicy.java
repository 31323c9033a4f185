package io.gpusync.reactor;

/**
 * What an engine spends to see a completion sooner, chosen on its builder ({@link SyncEngine.Builder#waitPolicy}):
 * it decides how {@link WaitPath#SPIN_THEN_CALLBACK} waits (CUDA events and host timelines, OpenCL events…) are
 * served; the other paths are the same under both policies.
 *
 * <ul>
 *   <li>{@link #LOW_LATENCY} (the default): a wait is probed by the engine's poller threads for a spin budget of
 *       50 µs, and, while its source has learned a narrow window of completion times beyond that, through the window;
 *       only then is its callback registered. Short GPU work is seen a probe after it ends (microseconds), ahead of a
 *       thread blocked in the driver's own blocking-sync wait; the cost is a poller's CPU while waits spin or sit in
 *       their learned windows (up to one core per poller thread, nothing while no wait is near its completion).</li>
 *   <li>{@link #LOW_CPU}: no poller ever probes such a wait; its callback is registered at once, and a completion
 *       is seen when the driver calls back — for CUDA, about when a thread blocked on a blocking-sync event would
 *       wake, plus the hand-off to an engine event loop. Waiting costs no CPU beyond each wake-up.</li>
 * </ul>
 *
 * <p>{@link SyncEngine.Builder#spinBudget} sets the budget directly (zero is {@link #LOW_CPU}); whichever of the two
 * is called last wins. A policy is fixed when the engine is built. Neither policy changes how a wait is cancelled
 * (at once, on the cancelling thread) or where it completes ({@link WaitPath}); neither ever blocks an event loop.
 */
public enum WaitPolicy {
    /** Spin, then learned windows, then the callback: the soonest wake-up, at the pollers' CPU. */
    LOW_LATENCY(java.time.Duration.ofNanos(50_000)),
    /** The callback at once: no polling, a wake-up as soon as the driver calls back. */
    LOW_CPU(java.time.Duration.ZERO);

    private final java.time.Duration spinBudget;

    WaitPolicy(java.time.Duration spinBudget) {
        this.spinBudget = spinBudget;
    }

    /** The spin budget that stands for this policy ({@link SyncEngine.Builder#spinBudget}). */
    java.time.Duration spinBudget() {
        return spinBudget;
    }
}
