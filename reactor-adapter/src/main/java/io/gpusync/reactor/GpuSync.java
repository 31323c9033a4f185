package io.gpusync.reactor;

import io.gpusync.internal.ProcessServices;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The entry point: GPU (and host) sync points as {@code Mono<Void>}.
 *
 * <pre>{@code
 * CpuTimeline queue = new CpuTimeline();              // stands in for a GPU queue's timeline (io.gpusync.cpu)
 *
 * List<String> results = Flux.range(1, 5)
 *         .concatMap(batch -> {
 *             SyncPoint done = queue.at(batch);          // the value the "kernel" signals when done
 *             Schedulers.parallel().schedule(() -> queue.signal(batch), 2, TimeUnit.MILLISECONDS);
 *             return GpuSync.await(done, Duration.ofSeconds(1))   // no thread blocks while waiting
 *                     .thenReturn("batch " + batch + " ready");
 *         })
 *         .collectList()
 *         .block();
 * }</pre>
 * (README's first example, which its tests compile and run.)
 *
 * <p>Code that blocks instead — on virtual threads, say — uses {@link #block} or {@link #future}:
 * {@code GpuSync.block(point, Duration.ofSeconds(2))} parks a virtual thread without pinning its carrier.
 *
 * <p>A {@code Flux} of submitted work is awaited in order, with at most {@code maxInFlight} submissions
 * outstanding, by {@link #awaitEach}: {@code flux.transform(GpuSync.awaitEach(Submission::done, 64, timeout))}.
 *
 * <p>The static methods use {@link #defaultEngine()}, shared, created on first use and needing no setup;
 * {@link #builder()} makes engines with their own threads, loops, metrics and delivery scheduler. Every
 * {@code Mono} here is lazy and cold, completes when the point is signalled, fails with a typed
 * {@link io.gpusync.SyncException} on timeout or driver error, and frees its wait when cancelled — see
 * {@link SyncEngine} for the full semantics and {@link WaitPath} for where completions run.
 *
 * <p><b>Bad arguments.</b> One rule for every operator here and on {@link SyncEngine}: a {@code null}
 * argument — or a {@code null} element of a collection argument — throws {@link NullPointerException} at
 * once, when the {@code Mono} is assembled (as Reactor's own operators do); a non-null but invalid value — a
 * negative timeout, an empty collection for {@code awaitAny} — is reported through {@code onError} with an
 * {@link io.gpusync.SyncInvalidArgumentException} ({@link io.gpusync.ErrorKind#CONFIGURATION}), lazily, at
 * each subscription, never thrown at assembly. (Builder methods, which configure rather than wait, throw at
 * once: {@code NullPointerException} or {@code IllegalArgumentException}.)
 *
 * <p><b>Requirements.</b> Netty is optional: only {@link WaitPath#EPOLL} uses it, and it needs Netty 4.2
 * (reactor-netty 1.3, Spring Boot 4) with native epoll; without it fd waits take {@link WaitPath#BLOCKING}.
 * The JVM must allow native access: {@code --enable-native-access=ALL-UNNAMED} on the class path,
 * {@code --enable-native-access=} naming gpusync's modules that make native calls (the backend kit, the backends
 * and bindings in use; README.md gives the line) on the module path, plus {@code io.netty.common} and
 * {@code --add-modules} of Netty's epoll modules where the EPOLL path is wanted; an executable jar says
 * {@code Enable-Native-Access: ALL-UNNAMED} in its own manifest;
 * otherwise the first native wait fails with a {@link io.gpusync.SyncNotSupportedException} that says so.
 * Metrics: {@link GpuSyncMetrics}; tracing (an observation per wait): {@link GpuSyncWaitObservationConvention}.
 */
public final class GpuSync {
    private GpuSync() {
    }

    /** The shared engine (created on first use; daemon threads; ignores {@code dispose()}). */
    public static SyncEngine defaultEngine() {
        return ProcessServices.get().service(SyncEngine.class, SyncEngine::createShared);
    }

    /** A builder of independent engines. */
    public static SyncEngine.Builder builder() {
        return new SyncEngine.Builder();
    }

    /** {@link SyncEngine#await(SyncPoint)} on the default engine (timeout {@link SyncPoint#DEFAULT_WAIT_TIMEOUT}). */
    public static Mono<Void> await(SyncPoint point) {
        return defaultEngine().await(point);
    }

    /** {@link SyncEngine#await(SyncPoint, Duration)} on the default engine. */
    public static Mono<Void> await(SyncPoint point, Duration timeout) {
        return defaultEngine().await(point, timeout);
    }

    /** {@link SyncEngine#await(SyncWaiter, Duration)} on the default engine. */
    public static Mono<Void> await(SyncWaiter waiter, Duration timeout) {
        return defaultEngine().await(waiter, timeout);
    }

    /**
     * {@link SyncEngine#block(SyncPoint, Duration)} on the default engine: blocks the calling thread until
     * {@code point} is signalled; a virtual thread parks, leaving its carrier free (no native call, no spin on
     * it). Throws the typed {@link io.gpusync.SyncException} the {@code Mono} would signal;
     * interrupting the thread throws {@link io.gpusync.SyncCancelledException}, the wait freed and the flag kept.
     */
    public static void block(SyncPoint point, Duration timeout) {
        defaultEngine().block(point, timeout);
    }

    /**
     * {@link SyncEngine#future(SyncPoint, Duration)} on the default engine: never blocks; completed on the engine
     * thread that signals the {@code Mono}'s subscribers (never a driver's callback thread); {@code cancel} frees
     * the wait at once.
     */
    public static CompletableFuture<Void> future(SyncPoint point, Duration timeout) {
        return defaultEngine().future(point, timeout);
    }

    /** {@link SyncEngine#awaitAll} on the default engine. */
    public static Mono<Void> awaitAll(Collection<? extends SyncPoint> points, Duration timeout) {
        return defaultEngine().awaitAll(points, timeout);
    }

    /** {@link SyncEngine#awaitAny} on the default engine. */
    public static Mono<Void> awaitAny(Collection<? extends SyncPoint> points, Duration timeout) {
        return defaultEngine().awaitAny(points, timeout);
    }

    /** {@link SyncEngine#awaitEach} on the default engine: in source order, at most {@code maxInFlight} ahead. */
    public static <T> Function<Flux<T>, Flux<T>> awaitEach(Function<? super T, ? extends SyncPoint> pointOf,
                                                           int maxInFlight, Duration timeout) {
        return defaultEngine().awaitEach(pointOf, maxInFlight, timeout);
    }

    /** {@link SyncEngine#awaitEachUnordered} on the default engine: in completion order. */
    public static <T> Function<Flux<T>, Flux<T>> awaitEachUnordered(Function<? super T, ? extends SyncPoint> pointOf,
                                                                    int maxInFlight, Duration timeout) {
        return defaultEngine().awaitEachUnordered(pointOf, maxInFlight, timeout);
    }

    /** {@link SyncEngine#awaitFirst} on the default engine: the first point signalled. */
    public static Mono<SyncPoint> awaitFirst(Collection<? extends SyncPoint> points, Duration timeout) {
        return defaultEngine().awaitFirst(points, timeout);
    }

}
