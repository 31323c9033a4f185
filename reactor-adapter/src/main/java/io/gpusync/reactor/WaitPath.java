package io.gpusync.reactor;

/**
 * How the engine waits on a point — chosen per waiter from the abilities it advertises through
 * {@code io.gpusync.spi}, cheapest first. Also the {@code path} tag of the engine's metrics.
 *
 * <table>
 *   <caption>Where each path completes the {@code Mono} (before any {@code deliverOn} hop)</caption>
 *   <tr><th>path</th><th>threads used</th><th>{@code onComplete} runs on</th></tr>
 *   <tr><td>{@link #IMMEDIATE}</td><td>none</td><td>the subscribing thread</td></tr>
 *   <tr><td>{@link #CALLBACK}</td><td>none</td><td>the signalling thread for host timelines; an engine event
 *       loop for driver callbacks (if the loops refuse the hand-off, {@code Schedulers.boundedElastic()};
 *       the driver's thread only if that refuses too)</td></tr>
 *   <tr><td>{@link #EPOLL}</td><td>a share of the event loops</td><td>the event loop that saw the fd readable</td></tr>
 *   <tr><td>{@link #WAIT_SET}</td><td>one per wait set (e.g. per Vulkan device)</td><td>that wait-set thread</td></tr>
 *   <tr><td>{@link #BLOCKING}</td><td>one pool thread per wait in progress</td><td>that pool thread</td></tr>
 *   <tr><td>{@link #PROBE}</td><td>the shared poller threads</td><td>the poller thread that saw it</td></tr>
 *   <tr><td>{@link #SPIN_THEN_CALLBACK}</td><td>the pollers, for the spin budget and, by default, the learned
 *       window of a source whose waits outlive it</td><td>a poller thread, or as {@link #CALLBACK} once handed
 *       over</td></tr>
 * </table>
 * A timeout, a cancel or an engine dispose terminates the wait on the thread that caused it (the timer
 * scheduler's, the cancelling thread, the disposing thread).
 */
public enum WaitPath {
    /**
     * Already signalled at subscription (or a {@code Duration.ZERO} probe): answered at once, on the subscribing
     * thread — except for blocking waiters without a cheap probe, which are probed on the {@link #BLOCKING} pool.
     */
    IMMEDIATE,
    /** The API calls back on completion ({@link io.gpusync.spi.SignalCallbackWaiter}): no thread waits. */
    CALLBACK,
    /**
     * A file descriptor becomes readable ({@link io.gpusync.spi.ReadableFdWaiter}): watched by a Netty epoll loop.
     * Needs Netty 4.2 (reactor-netty 1.3, Spring Boot 4) with its epoll transport and native library; without
     * them (no Netty, Netty 4.1, no native epoll) fd waits take {@link #BLOCKING}.
     */
    EPOLL,
    /** Many waits of one {@link io.gpusync.spi.WaitSet} served by one thread blocked in a wait-any. */
    WAIT_SET,
    /**
     * A native blocking wait ({@link io.gpusync.spi.BlockingWaiter}) on a pool thread, in slices; its first probe
     * runs there too (never on the subscribing thread). A backend may lend its own threads for it instead
     * ({@link io.gpusync.spi.BlockingWaiter#waitThreads()}: the EGL/GL backend does), and the wait then completes on
     * the lent thread. With the pool full, the wait is probed by {@link #PROBE}.
     * A cancelled or timed-out wait frees its thread at once if the waiter is a
     * {@link io.gpusync.spi.WakeableWaiter}, else at the end of the slice.
     */
    BLOCKING,
    /**
     * Probe-only: the shared spin-then-poll scheduler probes {@link io.gpusync.SyncWaiter#isSignaled()} — by default
     * when the completion times learned for the waiter's class say completion is likely soon (spinning through a
     * short wait's expected completion, polling a long one's), and a wait long overdue or idle only every 15–32 ms
     * (so that idle waits cost well under 1 % of a core; such a wait's completion is seen that late).
     */
    PROBE,
    /**
     * A {@link io.gpusync.spi.CheapProbe} that can also call back: the pollers spin on its probe for the
     * spin budget, then hand it to the {@link #CALLBACK} path — microsecond wakes for imminent completions,
     * no CPU for long waits. By default (the adaptive pollers) a wait whose source has learned a narrow window of
     * completion times past the spin budget stays on its poller through that window, with no callback registered
     * (for CUDA no stream callback, for OpenCL no {@code clSetEventCallback}), and is handed over only if the window
     * closes first; a handed-over wait is still probed now and then (a quarter of its age) for a few ms, so a late
     * callback (some drivers deliver theirs well after the status changes) does not set its wake latency. Sources are waiter classes, per engine
     * poller thread. With {@link WaitPolicy#LOW_CPU} (a zero spin budget, {@code SyncEngine.Builder.spinBudget(Duration.ZERO)}) such waits go to
     * their callback at once and no poller touches them.
     */
    SPIN_THEN_CALLBACK
}
