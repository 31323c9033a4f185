package io.gpusync.reactor;

import io.gpusync.spi.Timeouts;
import reactor.core.scheduler.Scheduler;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Configures a {@link SyncEngine}; made by {@link GpuSync#builder()}. Not thread-safe: configure it on one thread.
 * No method blocks; {@link #build()} may be called more than once (each call makes an independent engine, whose
 * threads start on first need).
 */
public final class SyncEngineBuilder {
    String name;
    int eventLoopThreads = 1;
    Object eventLoopGroup; // a Netty 4.2 IoEventLoopGroup: Object keeps Netty optional
    int waiterThreads = 16;
    int pollerThreads = 1;
    Duration blockingSlice = Duration.ofMillis(5);
    Duration spinBudget = Duration.ofNanos(50_000);
    Supplier<IdleStrategy> idleStrategy;
    Scheduler deliverOn;
    Scheduler timer;
    Object meterRegistry;
    boolean jdkLoops;

    SyncEngineBuilder() {
    }

    /** Tests: the loops of an engine without Netty ({@link JdkLoops}), with Netty on the class path. */
    SyncEngineBuilder jdkLoops() {
        this.jdkLoops = true;
        return this;
    }

    /** Names the engine (thread names, metric tag). */
    public SyncEngineBuilder name(String name) {
        this.name = Objects.requireNonNull(name, "name");
        return this;
    }

    /**
     * Threads of the engine's own event loops (default 1): Netty 4.2 epoll loops when Netty 4.2 and native
     * epoll are on the class path, else plain hand-off threads; ignored with {@link #eventLoopGroup}.
     */
    public SyncEngineBuilder eventLoopThreads(int n) {
        this.eventLoopThreads = positive(n, "eventLoopThreads");
        return this;
    }

    /**
     * Uses these Netty event loops for fd completions ({@link WaitPath#EPOLL}) and driver-callback hand-offs
     * instead of creating loops — typically a Reactor Netty server's:
     * {@code builder.eventLoopGroup(LoopResources.create("http", workers, true).onServer(true))}. The group
     * must be a Netty 4.2 {@code io.netty.channel.IoEventLoopGroup} running {@code EpollIoHandler}
     * (reactor-netty 1.3 / Spring Boot 4 with native epoll). The engine never shuts them down.
     *
     * @throws io.gpusync.SyncNotSupportedException at once if Netty is older than 4.2 (e.g. the 4.1 of
     *         Spring Boot 3 / reactor-netty 1.2), its epoll transport is missing, or {@code group} is not an
     *         {@code IoEventLoopGroup} running epoll; the message names the version found and the fix
     */
    public SyncEngineBuilder eventLoopGroup(io.netty.channel.EventLoopGroup group) {
        Objects.requireNonNull(group, "group");
        NettyPresence.requireEpollGroup(group);
        this.eventLoopGroup = group;
        return this;
    }

    /** The most platform threads blocked in native waits at once (default 16); more waits are probed. */
    public SyncEngineBuilder waiterThreads(int n) {
        this.waiterThreads = positive(n, "waiterThreads");
        return this;
    }

    /** Threads of the spin-then-poll scheduler for probe-only waits (default 1). */
    public SyncEngineBuilder pollerThreads(int n) {
        this.pollerThreads = positive(n, "pollerThreads");
        return this;
    }

    /**
     * The longest a blocking or wait-set thread stays in one native wait (default 5 ms): the bound on how
     * long a cancelled wait can keep a thread blocked where the API cannot be woken. A blocking wait on a
     * {@link io.gpusync.spi.WakeableWaiter} frees its thread at once when it is cancelled, times out or
     * the engine is disposed, whatever the slice.
     */
    public SyncEngineBuilder blockingSlice(Duration slice) {
        if (slice.isNegative() || slice.isZero()) {
            throw new IllegalArgumentException("blockingSlice must be positive: " + slice);
        }
        this.blockingSlice = slice;
        return this;
    }

    /**
     * How long a poller spins after activity before parking (default 50 µs); the spin is per poller
     * thread, so the total is bounded by {@code pollerThreads} cores, whatever the number of waits. It is also
     * how long a {@link WaitPath#SPIN_THEN_CALLBACK} wait is probed before its callback is registered; zero
     * means no spinning at all: such waits go to their callback at once, and no poller probes or watches them
     * (not even through a learned window of their source, which a non-zero budget allows).
     */
    public SyncEngineBuilder spinBudget(Duration budget) {
        this.spinBudget = Timeouts.requireValid(budget);
        return this;
    }

    /**
     * Replaces the pollers' adaptive scheduling (the default: per-source learned completion times, see
     * {@link WaitPath#PROBE}) with a fixed idle strategy, one instance per poller thread — e.g.
     * {@link BackoffIdleStrategy#defaults()} (the default before 2026-12), {@link BusySpinIdleStrategy};
     * overrides {@link #spinBudget} for idling.
     */
    public SyncEngineBuilder idleStrategy(Supplier<IdleStrategy> strategy) {
        this.idleStrategy = Objects.requireNonNull(strategy, "strategy");
        return this;
    }

    /**
     * Delivers {@code onComplete}/{@code onError} on this scheduler instead of the engine thread that saw it.
     * If the scheduler rejects a delivery (a bounded one that is full, a disposed one), that wait is
     * delivered in place instead: never lost.
     */
    public SyncEngineBuilder deliverOn(Scheduler scheduler) {
        this.deliverOn = Objects.requireNonNull(scheduler, "scheduler");
        return this;
    }

    /** Runs timeouts on this scheduler (default: {@link Schedulers#parallel()}, looked up per wait). */
    public SyncEngineBuilder timer(Scheduler scheduler) {
        this.timer = Objects.requireNonNull(scheduler, "scheduler");
        return this;
    }

    /**
     * Publishes the engine's meters to this Micrometer registry: the same as
     * {@code new GpuSyncMetrics(engine).bindTo(registry)} on the built engine (without histograms; see
     * {@link GpuSyncMetrics} for the meters and for histograms).
     */
    public SyncEngineBuilder meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
        this.meterRegistry = Objects.requireNonNull(registry, "registry");
        return this;
    }

    /** A new engine with this configuration. */
    public SyncEngine build() {
        return new SyncEngine(this, false);
    }

    private static int positive(int n, String what) {
        if (n <= 0) {
            throw new IllegalArgumentException(what + " must be positive: " + n);
        }
        return n;
    }
}
