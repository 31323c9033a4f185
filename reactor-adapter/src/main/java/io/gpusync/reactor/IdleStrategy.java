package io.gpusync.reactor;

/**
 * What a poller thread of the spin-then-poll scheduler does between two probe passes over its pending
 * probe-only waits (in the spirit of Agrona's idle strategies). Each poller thread owns one instance, so
 * implementations need not be thread-safe; they are created by the supplier given to
 * {@link SyncEngine.Builder#idleStrategy}.
 *
 * <p>Without one, pollers schedule adaptively (per-source learned completion times; see {@link SpinThenPoll}).
 * Provided: {@link BackoffIdleStrategy} (spin while completions are imminent, then park with
 * an interval that adapts to the cost of a pass), {@link BusySpinIdleStrategy} (lowest latency, one core per
 * poller thread) and {@link SleepingIdleStrategy} (a fixed park, least CPU).
 */
public interface IdleStrategy {

    /**
     * Idles after a probe pass.
     *
     * @param completions    how many waits the pass completed (0 = nothing happened)
     * @param passNanos      how long the pass took (grows with the number of pending waits and the cost of a
     *                       probe)
     */
    void idle(int completions, long passNanos);

    /** Forgets the back-off state (a new wait arrived). */
    void reset();
}
