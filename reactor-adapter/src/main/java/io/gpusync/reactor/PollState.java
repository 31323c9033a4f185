package io.gpusync.reactor;

/**
 * What the pollers ({@link SpinThenPoll}, through {@link ProbePass} and {@link AdaptiveProbePass}) keep for one
 * wait they probe: a spin-then-callback wait's hand-over, and the adaptive schedule of its probes. The wait holds
 * it ({@link PendingWait#polled}) from the moment the pollers take the wait; no other strategy reads or writes it.
 *
 * <p><b>Threading.</b> Written before the wait reaches its poller (the hand-over), then confined to the thread that
 * probes it — which changes only when the stuck-probe guard moves the wait to a new thread, while the old one cannot
 * touch it ({@link Poller}) — except {@link #learnsAfterHandOver}, which the thread that sees a handed-over wait
 * signalled reads.
 */
final class PollState {
    /** Spin-then-callback: after this long on the pollers, {@link #handOverTo} takes the wait over. */
    long handOverAfterNanos;
    /** Spin-then-callback: the callback path, until the hand-over ({@code null} after it, or for probe-only waits). */
    WaitStrategy handOverTo;
    /** Adaptive probing: when to probe next. */
    long nextProbeNanos;
    /** Adaptive probing: the learned completion times of the wait's source. */
    CompletionTimes probeTimes;
    /** Adaptive spin-then-callback: handed over to the callback path, but still probed through its source's window. */
    boolean watched;
    /**
     * Set when an adaptive poller hands the wait over to the callback path: the source whose times learn from the
     * age at which the wait is then seen signalled, by whichever thread sees it.
     */
    volatile CompletionTimes learnsAfterHandOver;
}
