package io.gpusync.reactor;

import io.gpusync.ErrorKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.Timeouts;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Turns {@link SyncPoint}s into {@code Mono<Void>} waits without a thread per wait.
 *
 * <p>Every wait first probes its point once on the subscribing thread (an already-signalled point costs no
 * registration) — except a {@link io.gpusync.spi.BlockingWaiter} that is not a {@link io.gpusync.spi.CheapProbe} (an EGL/GL
 * sync binds a context to probe), whose first probe runs on the waiter pool, so that subscribing from an event
 * loop or a Reactor {@code parallel} thread never blocks it — then goes the cheapest {@link WaitPath} its
 * waiter allows (see {@code io.gpusync.spi}): spin-then-callback (cheap probes
 * spun on for the spin budget, then a callback), callback (no thread), epoll (an fd on a Netty 4.2 epoll event
 * loop; without Netty 4.2 and native epoll on the class path, fd waits take the blocking path instead),
 * wait set (one thread per device), blocking (a pool thread in native-wait slices), probe (shared poller
 * threads). {@link #pathFor} tells which.
 *
 * <p><b>Semantics of every returned {@code Mono}.</b> Lazy and cold: nothing happens before subscription
 * and each subscription is a new wait. It completes empty once the point is signalled; fails with
 * {@link SyncTimeoutException} no earlier than the timeout ({@link SyncPoint#FOREVER} never times out,
 * {@link Duration#ZERO} probes once); fails with the waiter's own {@link io.gpusync.SyncException} (kind and backend
 * intact) on a driver error — a waiter that fails is never retried. Cancelling (dispose, {@code take},
 * {@code timeout}, the losers of {@link #awaitAny}) deregisters the wait and frees what it held at once; no
 * signal is delivered after a cancel.
 *
 * <p><b>Termination.</b> Each wait terminates exactly once and always: whatever a subscriber, a release of
 * native resources, the {@code deliverOn} scheduler or the user's event loops throw, the outcome is delivered.
 * The wait's native registration (callback, fd watch, wait-set membership) is released before the
 * subscriber is signalled, so the subscriber may close the point's waiter in {@code doOnError}/{@code doFinally};
 * where a driver may still use the primitive after that (an OpenCL command whose dependency fails), gpusync holds
 * the primitive back until the driver is done (see {@code io.gpusync.opencl.OpenClEvents}). Native handles the
 * application keeps itself are not covered: release those only as the backend's documentation says.
 * An exception thrown by a subscriber's {@code onComplete}/{@code onError} goes to
 * {@link Operators#onErrorDropped} — never into the engine's threads, an event loop, a driver's thread or the
 * thread that signalled — and harms no other wait.
 *
 * <p><b>Threads.</b> {@code onComplete}/{@code onError} run where {@link WaitPath} documents, or on the
 * builder's {@code deliverOn} scheduler (in place if that scheduler rejects the task); never on a
 * driver-owned callback thread (unless every other thread refuses the hand-off: see {@link WaitPath#CALLBACK}).
 * Timeouts run on the builder's {@code timer} or on a timer thread of the engine's own, which no user code shares
 * (on {@link Schedulers#parallel()} while Reactor's factory is replaced: virtual time). Every thread it starts is a named platform
 * daemon thread ({@code gpusync-<name>-…}), created on first need.
 *
 * <p><b>Disposal.</b> {@link #dispose()}, from any thread (the engine's own included), terminates every
 * pending wait with {@link SyncCancelledException}, stops the engine's threads and, if the engine created it,
 * its event loop group; later subscriptions fail the same way. On a non-blocking thread it returns at once;
 * {@link #disposeGracefully()} disposes without blocking anyone and tells when every thread has ended. The shared
 * {@link GpuSync#defaultEngine()} ignores both.
 *
 * <p>Thread-safe.
 */
public final class SyncEngine implements Disposable {
    private final String name;
    private final boolean shared;
    private final PendingWaits pending = new PendingWaits();
    private final BoundMetrics metrics = new BoundMetrics();
    private final DeviceLosses losses = new DeviceLosses();
    private final EngineTimeouts timeouts;
    private final WaitStrategies strategies;
    private final EngineDisposal disposal;
    private final EngineWaits waits;
    private final java.util.concurrent.Executor handoff; // the loops: where a virtual thread's block/future starts
    /** The {@code gpusync.wait} observations, or {@code null}: none (no Micrometer class is then touched). */
    private final WaitObservations observations;

    private SyncEngine(Builder b, boolean shared) {
        this.name = b.name != null ? b.name : shared ? "default" : EngineNames.inThisProcess().next();
        this.shared = shared;
        EngineThreads threads = new EngineThreads(name);
        EngineLoops loops;
        // Netty's classes are touched only through NettyLoops, and only when Netty 4.2 with epoll is there
        if (b.eventLoopGroup != null) {
            loops = NettyLoops.shared(b.eventLoopGroup);
        } else if (!b.jdkLoops && NettyPresence.epollUsable()) {
            loops = NettyLoops.own(b.eventLoopThreads, threads.role("loop"));
        } else {
            loops = new JdkLoops(b.eventLoopThreads, threads.role("loop"));
        }
        // no idle strategy given: the adaptive scheduler (per-source learned completion times, AdaptiveProbePass)
        this.strategies = new WaitStrategies(loops, threads, b.pollerThreads, b.idleStrategy, b.spinBudget,
                b.blockingSlice, b.waiterThreads);
        this.timeouts = new EngineTimeouts(b.timer, threads.role("timer"));
        this.disposal = new EngineDisposal(name, pending, timeouts, strategies.all(), loops, threads);
        this.waits = new EngineWaits(name, strategies, pending, timeouts, metrics, losses, disposal, b.deliverOn);
        this.handoff = loops;
        if (b.meterRegistry != null) {
            new GpuSyncMetrics(this).bindTo((io.micrometer.core.instrument.MeterRegistry) b.meterRegistry);
        }
        this.observations = b.observationRegistry == null ? null
                : new WaitObservations(b.observationRegistry, b.observationConvention, name);
    }

    static SyncEngine createShared() {
        return new SyncEngine(new Builder(), true);
    }

    /**
     * Waits on {@code point} up to {@link SyncPoint#DEFAULT_WAIT_TIMEOUT}.
     *
     * @throws NullPointerException if {@code point} is null (at assembly)
     */
    public Mono<Void> await(SyncPoint point) {
        return await(point, SyncPoint.DEFAULT_WAIT_TIMEOUT);
    }

    /**
     * Waits on {@code point} up to {@code timeout}. A negative {@code timeout} fails the {@code Mono} through
     * {@code onError} with {@link SyncInvalidArgumentException}, at each subscription.
     *
     * @throws NullPointerException if {@code point} or {@code timeout} is null (at assembly)
     */
    public Mono<Void> await(SyncPoint point, Duration timeout) {
        return await(Objects.requireNonNull(point, "point").waiter(), timeout);
    }

    /**
     * Waits on {@code waiter} up to {@code timeout}; see {@link #await(SyncPoint, Duration)}.
     *
     * @throws NullPointerException if {@code waiter} or {@code timeout} is null (at assembly)
     */
    public Mono<Void> await(SyncWaiter waiter, Duration timeout) {
        Objects.requireNonNull(waiter, "waiter");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            return WaitArguments.invalidTimeout(timeout);
        }
        return WaitMono.of(this, waiter, timeout);
    }

    /**
     * Waits on {@code point} up to {@code timeout}, blocking the calling thread — typically a virtual thread
     * (Spring MVC with {@code spring.threads.virtual.enabled}). The wait of {@link #await(SyncPoint, Duration)},
     * on the same {@link WaitPath}: returns once the point is signalled, else throws what the {@code Mono} would
     * signal ({@link SyncTimeoutException} no earlier than {@code timeout}, the waiter's own
     * {@link io.gpusync.SyncException} on a driver error, {@link SyncCancelledException} if the engine is
     * disposed, {@link SyncInvalidArgumentException} for a negative {@code timeout}).
     *
     * <p><b>Blocking.</b> The thread parks ({@link java.util.concurrent.locks.LockSupport#park}) until the engine
     * completes the wait. On a virtual thread the wait also <em>starts</em> on the engine's event loops (its first
     * probe, a callback's registration…): no native call and no spin runs on the carrier, which serves other
     * virtual threads meanwhile. On a platform thread it starts in place. On a thread that must not block (Reactor
     * {@code NonBlocking} threads, Netty event loops) it throws {@link IllegalStateException}, as Reactor's does.
     *
     * <p><b>Interrupts.</b> Interrupting the thread (also before the call) ends the wait with
     * {@link SyncCancelledException}: the wait is freed — its registration released, no longer among
     * {@link #pendingWaits()} — before this method throws, and the interrupt flag stays set.
     *
     * @throws NullPointerException if {@code point} or {@code timeout} is null
     */
    public void block(SyncPoint point, Duration timeout) {
        SyncWaiter waiter = Objects.requireNonNull(point, "point").waiter();
        CallerWaits.block(this, handoff, waiter, Objects.requireNonNull(timeout, "timeout"));
    }

    /**
     * A wait on {@code point} up to {@code timeout} as a {@code CompletableFuture}, for code without Reactor: it
     * completes with {@code null} once the point is signalled, or exceptionally with what {@link #block} throws.
     * Never blocks; on a virtual thread the wait starts on the engine's event loops, as in {@link #block}.
     *
     * <p><b>Threads.</b> Completed where the {@code Mono} of {@link #await(SyncPoint, Duration)} signals its
     * subscriber: the engine thread that saw the outcome ({@link WaitPath}) or the {@code deliverOn} scheduler,
     * never a driver's callback thread. Stages added before completion run there too (use the {@code *Async}
     * forms with an {@code Executor} for work that blocks); an already signalled point completes it at once.
     *
     * <p><b>Cancellation.</b> {@code cancel} — or completing the future by other means ({@code complete},
     * {@code orTimeout}…) frees the wait at once, in place, as cancelling the {@code Mono} does (one still starting
     * on an engine thread is freed there as its start ends); cancelling a dependent stage does not.
     *
     * @throws NullPointerException if {@code point} or {@code timeout} is null
     */
    public CompletableFuture<Void> future(SyncPoint point, Duration timeout) {
        SyncWaiter waiter = Objects.requireNonNull(point, "point").waiter();
        return CallerWaits.future(this, handoff, waiter, Objects.requireNonNull(timeout, "timeout"));
    }

    /**
     * Completes when every point has been signalled (at once for an empty collection). The first error
     * (including a timeout) fails the result and cancels — frees — every other wait. Like {@link #await}, the
     * member waits start at subscription, without demand; the collection is read at assembly. A negative
     * {@code timeout} fails the {@code Mono} with {@link SyncInvalidArgumentException}.
     *
     * @throws NullPointerException if {@code points}, one of its elements or {@code timeout} is null (at
     *                              assembly)
     */
    public Mono<Void> awaitAll(Collection<? extends SyncPoint> points, Duration timeout) {
        List<SyncPoint> members = WaitArguments.requireMembers(points, timeout);
        if (timeout.isNegative()) {
            return WaitArguments.invalidTimeout(timeout);
        }
        List<Mono<Void>> waits = new ArrayList<>(members.size());
        for (SyncPoint p : members) {
            waits.add(await(p, timeout));
        }
        return waits.isEmpty() ? Mono.empty() : WaitGroupMono.of(waits, WaitGroupMono.Mode.ALL);
    }

    /**
     * Completes when the first point is signalled; every other wait is then cancelled and freed. Errors of
     * single members are set aside while another may still succeed; when all fail, the result fails with the
     * first member's error (so all timing out fails with {@link SyncTimeoutException}), the others suppressed.
     * Like {@link #await}, the member waits start at subscription, without demand; the collection is read at
     * assembly. An empty collection or a negative {@code timeout} fails the {@code Mono} with
     * {@link SyncInvalidArgumentException}.
     *
     * @throws NullPointerException if {@code points}, one of its elements or {@code timeout} is null (at
     *                              assembly)
     */
    public Mono<Void> awaitAny(Collection<? extends SyncPoint> points, Duration timeout) {
        List<SyncPoint> members = WaitArguments.requireMembers(points, timeout);
        if (timeout.isNegative()) {
            return WaitArguments.invalidTimeout(timeout);
        }
        if (members.isEmpty()) {
            return Mono.error(() -> new SyncInvalidArgumentException(null, "awaitAny needs at least one point"));
        }
        List<Mono<Void>> waits = new ArrayList<>(members.size());
        for (SyncPoint p : members) {
            waits.add(await(p, timeout));
        }
        return WaitGroupMono.of(waits, WaitGroupMono.Mode.ANY);
    }

    /** The largest {@code maxInFlight} of {@link #awaitEach} and {@link #awaitEachUnordered}: 2<sup>20</sup>. */
    public static final int MAX_IN_FLIGHT = 1 << 20;

    /**
     * A pipeline stage, for {@code flux.transform(...)}: waits on the point of every item ({@code pointOf}) and
     * emits the item, <b>in source order</b>, as soon as its point and those of all earlier items have been
     * signalled.
     *
     * <pre>{@code
     * CpuTimeline queue = new CpuTimeline();          // stands in for one in-order GPU queue's timeline
     * List<Integer> done = Flux.range(1, 100)
     *         .map(batch -> {                         // "submit" a kernel that signals `batch` when done
     *             Schedulers.single().schedule(() -> queue.signal(batch), 1, TimeUnit.MILLISECONDS);
     *             return batch;
     *         })
     *         .transform(engine.awaitEach(batch -> queue.at(batch), 16, Duration.ofSeconds(1)))
     *         .collectList()                          // ≤ 16 submitted and not yet done; in order
     *         .block();
     * }</pre>
     *
     * <p><b>Backpressure.</b> It requests from upstream only what downstream has asked for, and at most
     * {@code maxInFlight} items beyond those it has emitted: when the submission happens upstream, no more than
     * {@code maxInFlight} submissions are outstanding, and downstream backpressure reaches the GPU queue. Demand
     * of 0 requests nothing upstream. All the waits in flight proceed at once (each an ordinary wait of this
     * engine, on the path its waiter allows, with {@code timeout} from the moment its item arrives).
     *
     * <p><b>Errors and cancellation.</b> The first wait that fails or times out fails the Flux with a
     * {@link io.gpusync.SyncException} of the same type (a timeout stays a {@link SyncTimeoutException}) whose
     * message names the item's index and point, and cancels upstream and every other wait. An error of
     * {@code pointOf} or of upstream fails the Flux likewise. Cancelling the Flux ({@code take(n)} and
     * {@code dispose} included) cancels upstream and frees every wait in flight at once. Disposing the engine
     * fails the Flux with {@link SyncCancelledException}.
     *
     * <p><b>Threads.</b> Adds no thread and takes no lock: items are emitted on the thread that signals the
     * wait that unblocks them (see {@link WaitPath}), on the {@code deliverOn} scheduler if set, or on the thread
     * that requests or sends items. Never blocks. Cold and lazy: each subscription is a new pipeline.
     *
     * @param pointOf     the point to wait on for an item (called once per item, on the thread of
     *                    {@code onNext}); must not return {@code null}
     * @param maxInFlight the most items received and not yet emitted, from 1 to {@value #MAX_IN_FLIGHT}; each
     *                    subscription holds an array of that many slots (rounded up to a power of two)
     * @param timeout     the timeout of each item's wait
     * <p>A negative {@code timeout} fails each subscription with {@link SyncInvalidArgumentException}, as in
     * every operator of this engine.
     *
     * @throws IllegalArgumentException if {@code maxInFlight} is not in [1, {@value #MAX_IN_FLIGHT}] (at assembly,
     *                                  like Reactor's prefetch checks)
     * @throws NullPointerException     if {@code pointOf} or {@code timeout} is null (at assembly)
     */
    public <T> Function<Flux<T>, Flux<T>> awaitEach(Function<? super T, ? extends SyncPoint> pointOf,
                                                    int maxInFlight, Duration timeout) {
        return FluxAwaitEach.operator(this, pointOf, maxInFlight, timeout, true);
    }

    /**
     * {@link #awaitEach} that emits each item as soon as its own point is signalled (completion order), with the
     * same backpressure, errors, cancellation and threads.
     *
     * @throws IllegalArgumentException if {@code maxInFlight} is not in [1, {@value #MAX_IN_FLIGHT}] (at assembly)
     * @throws NullPointerException     if {@code pointOf} or {@code timeout} is null (at assembly)
     */
    public <T> Function<Flux<T>, Flux<T>> awaitEachUnordered(Function<? super T, ? extends SyncPoint> pointOf,
                                                             int maxInFlight, Duration timeout) {
        return FluxAwaitEach.operator(this, pointOf, maxInFlight, timeout, false);
    }

    /**
     * Emits the first of {@code points} to be signalled — the very instance passed in — and cancels (frees) the
     * waits on the others at once. A point that fails is set aside while another may still be signalled; when
     * all have failed, the Mono fails with the failure that came first (the others suppressed), so none
     * signalled within {@code timeout} fails with {@link SyncTimeoutException}. Disposing the engine fails it
     * with {@link SyncCancelledException}. Like {@link #awaitAny}, the waits start at subscription, without
     * demand (the winner is held until requested); cancelling frees them all. Signals run on the thread of the
     * wait that decided (see {@link WaitPath}). An empty collection or a negative {@code timeout} fails the
     * {@code Mono} with {@link SyncInvalidArgumentException}.
     *
     * @throws NullPointerException if {@code points}, one of its elements or {@code timeout} is null (at
     *                              assembly)
     */
    public Mono<SyncPoint> awaitFirst(Collection<? extends SyncPoint> points, Duration timeout) {
        List<SyncPoint> members = WaitArguments.requireMembers(points, timeout);
        if (timeout.isNegative()) {
            return WaitArguments.invalidTimeout(timeout);
        }
        if (members.isEmpty()) {
            return Mono.error(() -> new SyncInvalidArgumentException(null, "awaitFirst needs at least one point"));
        }
        return MonoAwaitFirst.of(this, List.copyOf(members), timeout);
    }

    /** The path a wait on {@code waiter} takes in this engine (before any overflow to the probe path). */
    public WaitPath pathFor(SyncWaiter waiter) {
        return strategies.of(waiter).path();
    }

    /** Waits started and not yet terminated. */
    public int pendingWaits() {
        return pending.size();
    }

    /**
     * What a health check needs: pending waits, and the waits that failed because a device or context was
     * lost ({@link io.gpusync.DeviceLostException} or any {@link ErrorKind#FATAL} error). Never blocks.
     */
    public EngineHealth health() {
        return losses.health(name, pending.size(), disposal.isDisposed());
    }

    /**
     * Adds the metrics sink of {@code registry} (made by {@code sink}) unless this engine already reports to
     * that registry; see {@link GpuSyncMetrics}.
     */
    void bindMetrics(Object registry, Supplier<EngineMetrics> sink) {
        metrics.bind(registry, sink);
    }

    /** This engine's name (its threads are named {@code gpusync-<name>-…}). */
    public String name() {
        return name;
    }

    /**
     * Starts one wait for {@code actual}: how every operator of this engine waits (see {@link EngineWaits}); observed
     * from here with a registry ({@link WaitObservations}: called on the waiting thread, it parents the observation).
     */
    void subscribe(SyncWaiter waiter, Duration timeout, CoreSubscriber<? super Void> actual) {
        WaitObservations observed = observations;
        waits.subscribe(waiter, timeout, observed == null ? actual : observed.observe(waiter, pathFor(waiter), actual));
    }

    /** On the caller's thread: the Context carrying its observation to a wait started elsewhere (empty, free, without). */
    reactor.util.context.Context callerContext() {
        WaitObservations observed = observations;
        return observed == null ? reactor.util.context.Context.empty() : observed.callerContext();
    }

    /** Waits held by the timeout queues of the default timer (active, or terminated and not yet dropped). */
    int timeoutsHeld() {
        return timeouts.held();
    }

    /**
     * Terminates every pending wait with {@link SyncCancelledException} (each subscriber is signalled before
     * this returns, unless {@code deliverOn} is set), tells this engine's threads to stop and, if it created it,
     * shuts its event loop group down; later subscriptions fail the same way.
     *
     * <p><b>Blocking.</b> On a non-blocking thread — a Reactor {@link reactor.core.scheduler.NonBlocking} thread
     * ({@link Schedulers#isInNonBlockingThread()}), a Netty event loop (the engine's own included) — or on one of
     * the engine's own threads (e.g. in a completion), it returns at once: the threads stop by themselves, a
     * waiter or wait-set thread at the end of its current slice (at most {@code blockingSlice}), the loops once
     * their queued tasks have run; {@link #disposeGracefully()} tells when. On any other thread it then waits for
     * them to end, 5 s at most. Never throws. Idempotent (a later call returns at once); ignored by the shared
     * default engine.
     */
    @Override
    public void dispose() {
        if (!shared) {
            disposal.dispose();
        }
    }

    /**
     * Disposes the engine as {@link #dispose()} does, but never blocks: the returned {@code Mono} completes once
     * every thread the engine started has ended (its pollers, waiter and wait-set threads, and the event loops it
     * created), like Reactor's {@link Scheduler#disposeGracefully()}.
     *
     * <p>Lazy: the disposal starts at the first subscription (pending waits end then, with
     * {@link SyncCancelledException}). Idempotent: every subscription, before or after the engine was disposed
     * (by either method), completes when the threads have ended. It completes on an internal virtual thread that
     * waits for them, or at once on the subscribing thread if they ended before. Cancelling a subscription does
     * not stop the disposal. There is no time limit: a thread blocked for good in a native call that cannot be
     * woken keeps it from completing, so add a {@code timeout} where that matters. The shared default engine,
     * which ignores {@code dispose()}, returns a {@code Mono} that completes at once and disposes nothing.
     */
    public Mono<Void> disposeGracefully() {
        return shared ? Mono.empty() : disposal.gracefully();
    }

    @Override
    public boolean isDisposed() {
        return disposal.isDisposed();
    }

    @Override
    public String toString() {
        return "SyncEngine[" + name + ", pending=" + pendingWaits() + (isDisposed() ? ", disposed" : "") + "]";
    }

    /**
     * Configures a {@link SyncEngine}. Not thread-safe; {@link #build()} may be called more than once (each
     * call makes an independent engine).
     */
    public static final class Builder {
        private String name;
        private int eventLoopThreads = 1;
        private Object eventLoopGroup; // a Netty 4.2 IoEventLoopGroup: Object keeps Netty optional
        private int waiterThreads = 16;
        private int pollerThreads = 1;
        private Duration blockingSlice = Duration.ofMillis(5);
        private Duration spinBudget = WaitPolicy.LOW_LATENCY.spinBudget();
        private Supplier<IdleStrategy> idleStrategy;
        private Scheduler deliverOn;
        private Scheduler timer;
        private Object meterRegistry;
        private Object observationRegistry; // Micrometer's types as Object: the engine works without them
        private Object observationConvention;
        private boolean jdkLoops;

        Builder() {
        }

        /** Tests: the loops of an engine without Netty ({@link JdkLoops}), with Netty on the class path. */
        Builder jdkLoops() {
            this.jdkLoops = true;
            return this;
        }

        /** Names the engine (thread names, metric tag). */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * Threads of the engine's own event loops (default 1): Netty 4.2 epoll loops when Netty 4.2 and native
         * epoll are on the class path, else plain hand-off threads; ignored with {@link #eventLoopGroup}.
         */
        public Builder eventLoopThreads(int n) {
            this.eventLoopThreads = WaitArguments.positive(n, "eventLoopThreads");
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
        public Builder eventLoopGroup(io.netty.channel.EventLoopGroup group) {
            Objects.requireNonNull(group, "group");
            NettyPresence.requireEpollGroup(group);
            this.eventLoopGroup = group;
            return this;
        }

        /** The most platform threads blocked in native waits at once (default 16); more waits are probed. */
        public Builder waiterThreads(int n) {
            this.waiterThreads = WaitArguments.positive(n, "waiterThreads");
            return this;
        }

        /**
         * Threads of the spin-then-poll scheduler for probe-only waits (default 1), besides a guard thread, and up
         * to 4 more while probes are stuck (a poller stuck in a probe hands its other backends' waits to a new one).
         */
        public Builder pollerThreads(int n) {
            this.pollerThreads = WaitArguments.positive(n, "pollerThreads");
            return this;
        }

        /**
         * The longest a blocking or wait-set thread stays in one native wait (default 5 ms): the bound on how
         * long a cancelled wait can keep a thread blocked where the API cannot be woken. A blocking wait on a
         * {@link io.gpusync.spi.WakeableWaiter} frees its thread at once when it is cancelled, times out or
         * the engine is disposed, whatever the slice.
         */
        public Builder blockingSlice(Duration slice) {
            if (slice.isNegative() || slice.isZero()) {
                throw new IllegalArgumentException("blockingSlice must be positive: " + slice);
            }
            this.blockingSlice = slice;
            return this;
        }

        /**
         * How long a poller spins after activity before parking (default 50 µs, per poller thread) and a {@link
         * WaitPath#SPIN_THEN_CALLBACK} wait is probed before its callback; zero is {@link WaitPolicy#LOW_CPU}. */
        public Builder spinBudget(Duration budget) {
            if (Objects.requireNonNull(budget, "spinBudget").isNegative()) {
                throw new IllegalArgumentException("spinBudget must not be negative: " + budget);
            }
            this.spinBudget = budget;
            return this;
        }

        /** {@link WaitPolicy#LOW_LATENCY} (the default: a 50 µs spin budget) or {@link WaitPolicy#LOW_CPU} (none). */
        public Builder waitPolicy(WaitPolicy policy) {
            return spinBudget(Objects.requireNonNull(policy, "policy").spinBudget());
        }

        /**
         * Replaces the pollers' adaptive scheduling (the default: per-source learned completion times, see
         * {@link WaitPath#PROBE}) with a fixed idle strategy, one instance per poller thread — e.g.
         * {@link BackoffIdleStrategy#defaults()}, {@link BusySpinIdleStrategy};
         * overrides {@link #spinBudget} for idling.
         */
        public Builder idleStrategy(Supplier<IdleStrategy> strategy) {
            this.idleStrategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /**
         * Delivers {@code onComplete}/{@code onError} on this scheduler instead of the engine thread that saw it.
         * If the scheduler rejects a delivery (a bounded one that is full, a disposed one), that wait is
         * delivered in place instead: never lost.
         */
        public Builder deliverOn(Scheduler scheduler) {
            this.deliverOn = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** Runs timeouts on this scheduler, not the engine's own timer thread: blocking it delays them. */
        public Builder timer(Scheduler scheduler) {
            this.timer = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /**
         * Publishes the engine's meters to this Micrometer registry: the same as
         * {@code new GpuSyncMetrics(engine).bindTo(registry)} on the built engine (without histograms; see
         * {@link GpuSyncMetrics} for the meters and for histograms).
         */
        public Builder meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
            this.meterRegistry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * Observes every wait through this Micrometer registry: a {@code gpusync.wait} observation (a span, with a
         * tracing handler) per wait, a child of the subscriber's Reactor-Context observation or else of the
         * registry's current one; see {@link GpuSyncWaitObservationConvention}. Without a registry a wait pays
         * nothing and {@code micrometer-observation} may be absent.
         */
        public Builder observationRegistry(io.micrometer.observation.ObservationRegistry registry) {
            this.observationRegistry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /** Names and tags the observations of {@link #observationRegistry} with this convention. */
        public Builder observationConvention(GpuSyncWaitObservationConvention convention) {
            this.observationConvention = Objects.requireNonNull(convention, "convention");
            return this;
        }

        /** A new engine with this configuration. */
        public SyncEngine build() {
            return new SyncEngine(this, false);
        }
    }
}
