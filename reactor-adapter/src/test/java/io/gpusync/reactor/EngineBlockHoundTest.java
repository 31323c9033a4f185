package io.gpusync.reactor;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.util.concurrent.EventExecutor;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Under BlockHound (with Reactor's and Netty's integrations: Reactor {@code parallel} threads and Netty event
 * loops are non-blocking; here also the test engines' own loops), subscribing to and completing engine waits of
 * every path, and disposing engines, blocks no non-blocking thread — including a blocking-path wait that finds
 * the waiter pool full. A contended lock is seen only when it is contended, so the contended scenario runs many
 * subscribing threads at once, a capped waiter pool and disposals racing subscriptions, {@value #REPETITIONS}
 * times. (BlockHound sees neither a contended monitor nor, on JDK 25, a short timed wait that spins.) Blocking
 * calls are recorded rather than thrown, so that each test states plainly that there were none; a failure lists
 * them by blocking method and the engine frames that led to it. Besides the JDK's own blocking
 * methods, {@link ThreadPoolExecutor#toString()} counts as blocking: it takes the executor's lock (as a
 * rejected {@code execute} does when it builds its message).
 */
class EngineBlockHoundTest {
    private static final Queue<String> BLOCKING_CALLS = new ConcurrentLinkedQueue<>();
    /** Each blocking call as the blocking method and the engine's frames that led to it: the failure's summary. */
    private static final Queue<String> BLOCKING_SITES = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void installBlockHound() {
        BlockHound.install(builder -> builder
                .nonBlockingThreadPredicate(p -> p.or(EngineBlockHoundTest::ownNettyLoopOfAContendedEngine))
                .markAsBlocking(ThreadPoolExecutor.class, "toString", "()Ljava/lang/String;")
                .blockingMethodCallback(m -> {
                    StackTraceElement[] stack = new Throwable().getStackTrace();
                    if (!insideAnAllowedFrameThatPredatesBlockHound(stack)) {
                        BLOCKING_CALLS.add(m + " on " + Thread.currentThread().getName() + java.util.Arrays.toString(stack));
                        BLOCKING_SITES.add(m + " in " + engineFrames(stack));
                    }
                }));
    }

    /**
     * Reactor's integration allows parking inside {@code ScheduledThreadPoolExecutor$DelayedWorkQueue.take/offer}
     * (an idle {@code parallel} worker waiting for its next task). A worker that entered {@code take} before
     * BlockHound instrumented it — the whole suite runs in one JVM on the GPU machine, where earlier test classes
     * started the {@code parallel} workers — runs the old code of that frame, which does not mark the thread as
     * allowed, so its next park is reported (seen there as "Unsafe#park on parallel-9" from {@code take}). Such
     * a call is what the integration allows: it is not counted.
     */
    private static boolean insideAnAllowedFrameThatPredatesBlockHound(StackTraceElement[] stack) {
        for (StackTraceElement frame : stack) {
            if (frame.getClassName().equals("java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue")
                    && (frame.getMethodName().equals("take") || frame.getMethodName().equals("offer"))) {
                return true;
            }
        }
        return false;
    }

    /** The engine's (main code's) frames of a stack, innermost first: where a blocking call came from. */
    private static String engineFrames(StackTraceElement[] stack) {
        return java.util.Arrays.stream(stack)
                .filter(f -> f.getClassName().startsWith("io.gpusync.") && !f.getClassName().contains("Test"))
                .limit(4).map(f -> f.getClassName().replace("io.gpusync.reactor.", "") + "." + f.getMethodName())
                .collect(java.util.stream.Collectors.joining(" < "));
    }

    @BeforeEach
    void noneYet() {
        BLOCKING_CALLS.clear();
        BLOCKING_SITES.clear();
    }

    @AfterEach
    void noBlockingCallOnANonBlockingThread() {
        java.util.Map<String, Long> sites = BLOCKING_SITES.stream().collect(java.util.stream.Collectors.groupingBy(
                s -> s, java.util.TreeMap::new, java.util.stream.Collectors.counting()));
        assertThat(BLOCKING_CALLS).as("blocking calls on non-blocking threads, by site: %s", sites).isEmpty();
    }

    @Test
    void blockHoundSeesBlockingCallsOnParallelThreads() {
        Mono.fromRunnable(() -> {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(5));
        assertThat(BLOCKING_CALLS).singleElement().asString().contains("sleep");
        BLOCKING_CALLS.clear();
        ThreadPoolExecutor executor = new ThreadPoolExecutor(0, 1, 1, TimeUnit.SECONDS,
                new java.util.concurrent.SynchronousQueue<>());
        Mono.fromCallable(executor::toString).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(5));
        executor.shutdown();
        assertThat(BLOCKING_CALLS).singleElement().asString().contains("toString");
        BLOCKING_CALLS.clear();
    }

    @Test
    void waitsOfEveryPathSubscribedFromParallelThreadsBlockNothing() {
        SyncEngine engine = GpuSync.builder().name("bh-parallel").waiterThreads(1).build();
        try {
            everyPath(engine, wait -> wait.subscribeOn(Schedulers.parallel()));
        } finally {
            engine.dispose();
        }
    }

    @Test
    void waitsOfEveryPathOnAServersNettyLoopsBlockNothing() {
        MultiThreadIoEventLoopGroup serverLoops = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
        SyncEngine engine = GpuSync.builder().name("bh-netty").eventLoopGroup(serverLoops).waiterThreads(1).build();
        try {
            EventExecutor loop = serverLoops.next();
            everyPath(engine, wait -> wait.subscribeOn(Schedulers.fromExecutor(loop)));
        } finally {
            engine.dispose();
            serverLoops.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void pipelinesAndAwaitFirstOnParallelThreadsBlockNothing() {
        SyncEngine engine = GpuSync.builder().name("bh-pipelines").build();
        try {
            CpuTimeline queue = new CpuTimeline();
            Duration timeout = Duration.ofSeconds(5);
            Mono<Long> ordered = Flux.range(1, 2_000).transform(engine.awaitEach(i -> queue.at(i), 64, timeout))
                    .subscribeOn(Schedulers.parallel()).count();
            Mono<Long> unordered = Flux.range(1, 2_000).transform(engine.awaitEachUnordered(i -> queue.at(i), 64, timeout))
                    .subscribeOn(Schedulers.parallel()).count();
            Mono<SyncPoint> first = engine.awaitFirst(List.of(queue.at(3_000), queue.at(2_500)), timeout)
                    .subscribeOn(Schedulers.parallel());
            StepVerifier.create(Mono.zip(ordered, unordered, first))
                    .then(() -> Schedulers.parallel().schedule(() -> { // the "GPU", on a parallel thread too
                        for (int v = 1; v <= 3_000; v++) {
                            queue.signal(v);
                        }
                    }))
                    .assertNext(t -> {
                        assertThat(t.getT1()).isEqualTo(2_000);
                        assertThat(t.getT2()).isEqualTo(2_000);
                        assertThat(t.getT3()).isInstanceOf(SyncPoint.HostTimeline.class);
                    })
                    .expectComplete()
                    .verify(Duration.ofSeconds(10));
        } finally {
            engine.dispose();
        }
    }

    /** Subscribes (through {@code on}) one wait of each path, plus a blocking one with the pool full. */
    private static void everyPath(SyncEngine engine, Function<Mono<Void>, Mono<Void>> on) {
        CpuTimeline timeline = new CpuTimeline();
        HostWaiters.HostWaitSet set = new HostWaiters.HostWaitSet();
        try (EventFd fd = EventFd.create()) {
            List<SyncWaiter> waiters = new ArrayList<>(List.of(
                    timeline.at(1).waiter(),
                    HostWaiters.driverCallback(timeline.at(1)),
                    HostWaiters.cheapProbeWithCallback(timeline.at(1)),
                    HostWaiters.probeOnly(timeline.at(1)),
                    HostWaiters.member(set, timeline.at(1)),
                    HostWaiters.blockingOnly(timeline.at(1)), // takes the pool's one thread
                    HostWaiters.blockingOnly(timeline.at(1)), // finds the pool full
                    fd.point().waiter()));
            assertThat(waiters).extracting(engine::pathFor)
                    .containsAll(java.util.EnumSet.complementOf(java.util.EnumSet.of(WaitPath.IMMEDIATE)));
            List<Mono<Void>> waits = new ArrayList<>();
            for (SyncWaiter w : waiters) {
                waits.add(on.apply(engine.await(w, Duration.ofSeconds(5))));
            }
            waits.add(on.apply(engine.awaitAll(List.of(timeline.at(1), fd.point()), Duration.ofSeconds(5))));
            waits.add(on.apply(engine.awaitAny(List.of(timeline.at(1), timeline.at(2)), Duration.ofSeconds(5))));
            waits.add(on.apply(engine.await(timeline.at(1), Duration.ofMillis(1)).onErrorComplete())); // a timeout
            StepVerifier.create(Flux.merge(waits).then())
                    .then(() -> {
                        // every wait started (subscribeOn is asynchronous), then the points are signalled
                        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                        while (engine.pendingWaits() < waiters.size() + 4 && System.nanoTime() < deadline) {
                            Thread.onSpinWait();
                        }
                        assertThat(engine.pendingWaits()).isGreaterThanOrEqualTo(waiters.size() + 4);
                        timeline.signal(1);
                        fd.signal();
                    })
                    .expectComplete()
                    .verify(Duration.ofSeconds(10));
            StepVerifier.create(on.apply(engine.await(SyncPoint.CPU, Duration.ZERO))).verifyComplete();
        }
    }

    // ---- under contention: BlockHound sees a contended lock only when it is contended, so many threads at once,
    // ---- a waiter pool at its cap, disposal with waits pending, and every repetition a fresh engine

    /** Subscribes from four of these loops and disposes from a fifth; FastThreadLocalThreads: non-blocking. */
    private static MultiThreadIoEventLoopGroup serverLoops;
    /** Two Reactor parallel workers that subscribe too. */
    private static final List<Scheduler.Worker> PARALLEL_WORKERS = new ArrayList<>();

    @BeforeAll
    static void startSubscribers() {
        serverLoops = new MultiThreadIoEventLoopGroup(5, EpollIoHandler.newFactory());
        for (int i = 0; i < 2; i++) {
            PARALLEL_WORKERS.add(Schedulers.parallel().createWorker());
        }
    }

    @AfterAll
    static void stopSubscribers() {
        PARALLEL_WORKERS.forEach(Scheduler.Worker::dispose);
        serverLoops.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /**
     * The engines' own Netty loops run completions and hand-offs like any event loop, so BlockHound checks them
     * too (their threads are plain platform threads, which BlockHound would otherwise let block).
     */
    private static boolean ownNettyLoopOfAContendedEngine(Thread t) {
        return t.getName().startsWith("gpusync-bh-own-") && t.getName().contains("-loop-");
    }

    /**
     * {@code dispose()} on a Reactor parallel thread and on a Netty loop returns without blocking, and every pending
     * wait (one of each path, blocking ones past the pool's cap included) ends with {@link SyncCancelledException}.
     */
    @Test
    void disposeOnAParallelThreadOrANettyLoopBlocksNothingAndEndsEveryPendingWait() throws Exception {
        EventExecutor loop = serverLoops.next();
        for (Executor on : List.<Executor>of(task -> Schedulers.parallel().schedule(task), loop)) {
            SyncEngine engine = GpuSync.builder().name("bh-dispose").waiterThreads(1).build();
            Contention c = new Contention(engine);
            try {
                c.wave(List.of(on));
                CountDownLatch returned = new CountDownLatch(1);
                on.execute(() -> {
                    engine.dispose();
                    returned.countDown();
                });
                assertThat(returned.await(10, TimeUnit.SECONDS)).isTrue();
                c.awaitAllEnded(Duration.ofSeconds(10));
                assertThat(c.unexpected).isEmpty();
            } finally {
                engine.dispose();
                c.close();
            }
        }
    }

    /**
     * {@code disposeGracefully()} subscribed on a Netty loop blocks nothing, ends the pending waits, and completes
     * only once no thread of the engine (its own loop, poller, waiter and wait-set threads) is left.
     */
    @Test
    void disposeGracefullyOnANettyLoopBlocksNothingAndCompletesOnceTheEnginesThreadsHaveEnded() throws Exception {
        SyncEngine engine = GpuSync.builder().name("bh-graceful").waiterThreads(1).build();
        Contention c = new Contention(engine);
        try {
            EventExecutor loop = serverLoops.next();
            c.wave(List.of(loop));
            assertThat(EngineThreadsProbe.threadsOf(engine)).isPositive();
            StepVerifier.create(engine.disposeGracefully().subscribeOn(Schedulers.fromExecutor(loop)))
                    .expectComplete()
                    .verify(Duration.ofSeconds(10));
            assertThat(EngineThreadsProbe.threadsOf(engine)).isZero();
            c.awaitAllEnded(Duration.ofSeconds(10));
            assertThat(c.unexpected).isEmpty();
        } finally {
            c.close();
        }
    }

    /** Whose loops a contended engine uses. */
    enum Loops {
        /** Its own Netty epoll loops. */
        OWN,
        /** The server's loops (the subscribers' own). */
        SERVER,
        /** Its own hand-off threads, as without Netty ({@link JdkLoops}). */
        JDK
    }

    /** Where a contended engine is disposed from. */
    enum Disposer {
        /** A Reactor parallel thread. */
        PARALLEL,
        /** A server's Netty loop. */
        SERVER_LOOP,
        /** A wait's completion: the engine's hand-off loop (its own, the server's, or a JDK hand-off thread). */
        COMPLETION
    }

    /** Repetitions of the contended scenario: a contended lock shows only in some of them. */
    private static final int REPETITIONS = 40;
    /** Blocking waits that end at once, per subscriber and wave: they make the waiter pool's threads come and go. */
    private static final int QUICK_BLOCKING = 60;
    /** Waves of subscriptions before the one that races the disposal. */
    private static final int WAVES_BEFORE_DISPOSAL = 3;
    private static final long QUICK = 1;
    private static final long DISPOSE = 2;
    private static final long PENDING = 1_000;

    /**
     * Four server loops and two parallel threads subscribe waits of every path at once into an engine whose waiter
     * pool is capped at 3 threads: blocking waits that end at once (the pool's threads come and go under the
     * subscribers), {@code Duration.ZERO} probes, 1 ms timeouts (released on parallel threads) and waits of every
     * path that stay pending (more blocking ones than the cap: the rest overflow to the pollers). Then a second
     * wave races the engine's disposal ({@code dispose()} or a subscription to {@code disposeGracefully()}), from a
     * parallel thread, a server loop or a wait's completion on the engine's hand-off loop, with every wait of the
     * first wave still pending. No non-blocking thread blocks, every wait ends (the pending ones with the
     * disposal's {@link SyncCancelledException}), and {@code disposeGracefully()} completes with no thread of the
     * engine left.
     */
    @RepeatedTest(REPETITIONS)
    void contendedWaitsOfEveryPathAndADisposalWithWaitsPendingBlockNoNonBlockingThread(RepetitionInfo info)
            throws Exception {
        int r = info.getCurrentRepetition() - 1;
        Loops loops = Loops.values()[r % 3];
        Disposer disposer = Disposer.values()[(r / 3) % 3];
        boolean graceful = r % 2 == 1;
        SyncEngine.Builder builder = GpuSync.builder().name("bh-" + loops.name().toLowerCase() + "-" + r)
                .waiterThreads(3);
        if (loops == Loops.SERVER) {
            builder.eventLoopGroup(serverLoops);
        } else if (loops == Loops.JDK) {
            builder.jdkLoops();
        }
        SyncEngine engine = builder.build();
        Contention c = new Contention(engine);
        try {
            List<Executor> subscribers = new ArrayList<>();
            List<EventExecutor> serverLoopList = new ArrayList<>();
            serverLoops.forEach(serverLoopList::add);
            subscribers.addAll(serverLoopList.subList(0, 4));
            for (Scheduler.Worker w : PARALLEL_WORKERS) {
                subscribers.add(w::schedule);
            }
            CountDownLatch disposed = new CountDownLatch(1);
            AtomicLong disposeNanos = new AtomicLong();
            Runnable dispose = () -> {
                long t0 = System.nanoTime();
                if (graceful) {
                    engine.disposeGracefully().subscribe();
                } else {
                    engine.dispose();
                }
                disposeNanos.set(System.nanoTime() - t0);
                disposed.countDown();
            };
            if (disposer == Disposer.COMPLETION) {
                c.subscribe(engine.await(HostWaiters.driverCallback(c.timeline.at(DISPOSE)), Duration.ofSeconds(10))
                        .doOnSuccess(v -> dispose.run()), Outcome.QUICK);
            }
            for (int w = 0; w < WAVES_BEFORE_DISPOSAL; w++) {
                c.wave(subscribers);
            }
            // every wait of the first waves is pending (or queued on a poller); the last wave races the disposal
            CountDownLatch secondWave = c.startWave(subscribers);
            switch (disposer) {
                case PARALLEL -> Schedulers.parallel().schedule(dispose);
                case SERVER_LOOP -> serverLoopList.get(4).execute(dispose);
                case COMPLETION -> c.timeline.signal(DISPOSE);
            }
            assertThat(secondWave.await(20, TimeUnit.SECONDS)).as("second wave subscribed").isTrue();
            assertThat(disposed.await(20, TimeUnit.SECONDS)).as("disposed").isTrue();
            c.awaitAllEnded(Duration.ofSeconds(20));
            assertThat(c.unexpected).as("outcomes (dispose took %d us on a %s)", disposeNanos.get() / 1000, disposer)
                    .isEmpty();
            StepVerifier.create(engine.disposeGracefully()).expectComplete().verify(Duration.ofSeconds(20));
            assertThat(EngineThreadsProbe.threadsOf(engine)).as("threads of the engine left").isZero();
        } finally {
            engine.dispose();
            c.close();
        }
    }

    /** What a wait of the contended scenario may end with. */
    enum Outcome {
        /** Signalled before subscription: completes, or is cancelled by the disposal. */
        QUICK,
        /** Times out after 1 ms, or is cancelled by the disposal. */
        SHORT,
        /** Never signalled: cancelled by the disposal. */
        PENDING
    }

    /** The waits of one contended engine, and how each ended. */
    private static final class Contention implements AutoCloseable {
        final SyncEngine engine;
        final CpuTimeline timeline = new CpuTimeline();
        final HostWaiters.HostWaitSet set = new HostWaiters.HostWaitSet();
        final Queue<EventFd> fds = new ConcurrentLinkedQueue<>();
        final AtomicInteger subscribed = new AtomicInteger();
        final AtomicInteger ended = new AtomicInteger();
        final Queue<String> unexpected = new ConcurrentLinkedQueue<>();

        Contention(SyncEngine engine) {
            this.engine = engine;
            timeline.signal(QUICK);
        }

        /** Runs one wave on every subscriber at once and waits (on the test thread) until all have subscribed. */
        void wave(List<Executor> subscribers) throws InterruptedException {
            assertThat(startWave(subscribers).await(20, TimeUnit.SECONDS)).as("wave subscribed").isTrue();
        }

        CountDownLatch startWave(List<Executor> subscribers) {
            CountDownLatch done = new CountDownLatch(subscribers.size());
            for (Executor s : subscribers) {
                s.execute(() -> {
                    try {
                        subscribeOneOfEach();
                    } catch (Throwable e) {
                        unexpected.add("subscribing threw " + e);
                    } finally {
                        done.countDown();
                    }
                });
            }
            return done;
        }

        /** One subscriber's share of a wave. */
        private void subscribeOneOfEach() {
            Duration ten = Duration.ofSeconds(10);
            for (int i = 0; i < QUICK_BLOCKING; i++) { // the pool's threads start, serve and go idle under the others
                subscribe(engine.await(HostWaiters.blockingOnly(timeline.at(QUICK)), ten), Outcome.QUICK);
            }
            for (int i = 0; i < 2; i++) {
                subscribe(engine.await(HostWaiters.blockingOnly(timeline.at(QUICK)), Duration.ZERO), Outcome.QUICK);
                subscribe(engine.await(HostWaiters.wakeableBlocking(timeline.at(QUICK)), ten), Outcome.QUICK);
            }
            Duration ms = Duration.ofMillis(1); // released by the timeout, on a parallel thread
            subscribe(engine.await(HostWaiters.wakeableBlocking(timeline.at(PENDING)), ms), Outcome.SHORT);
            subscribe(engine.await(HostWaiters.blockingOnly(timeline.at(PENDING)), ms), Outcome.SHORT);
            subscribe(engine.await(HostWaiters.member(set, timeline.at(PENDING)), ms), Outcome.SHORT);
            subscribe(engine.await(newFd().point(), ms), Outcome.SHORT);
            subscribe(engine.await(HostWaiters.driverCallback(timeline.at(PENDING)), ms), Outcome.SHORT);
            // pending until the disposal, one of every path (two blocking ones: with six subscribers, past the cap)
            subscribe(engine.await(HostWaiters.blockingOnly(timeline.at(PENDING)), ten), Outcome.PENDING);
            subscribe(engine.await(HostWaiters.wakeableBlocking(timeline.at(PENDING)), ten), Outcome.PENDING);
            subscribe(engine.await(timeline.at(PENDING), ten), Outcome.PENDING);
            subscribe(engine.await(HostWaiters.driverCallback(timeline.at(PENDING)), ten), Outcome.PENDING);
            subscribe(engine.await(HostWaiters.cheapProbeWithCallback(timeline.at(PENDING)), ten), Outcome.PENDING);
            subscribe(engine.await(HostWaiters.probeOnly(timeline.at(PENDING)), ten), Outcome.PENDING);
            subscribe(engine.await(HostWaiters.member(set, timeline.at(PENDING)), ten), Outcome.PENDING);
            subscribe(engine.await(newFd().point(), ten), Outcome.PENDING);
            subscribe(engine.awaitAll(List.of(timeline.at(QUICK), timeline.at(PENDING)), ten), Outcome.PENDING);
            subscribe(engine.awaitAny(List.of(timeline.at(PENDING), newFd().point()), ten), Outcome.PENDING);
        }

        private EventFd newFd() {
            EventFd fd = EventFd.create();
            fds.add(fd);
            return fd;
        }

        void subscribe(Mono<Void> wait, Outcome expected) {
            subscribed.incrementAndGet();
            wait.subscribe(null, e -> ended(expected, e), () -> ended(expected, null));
        }

        private void ended(Outcome expected, Throwable error) {
            boolean ok = switch (expected) {
                case QUICK -> error == null || error instanceof SyncCancelledException;
                case SHORT -> error instanceof SyncTimeoutException || error instanceof SyncCancelledException;
                case PENDING -> error instanceof SyncCancelledException;
            };
            if (!ok) {
                unexpected.add(expected + " wait ended with " + (error == null ? "completion" : error.toString()));
            }
            ended.incrementAndGet();
        }

        void awaitAllEnded(Duration within) throws InterruptedException {
            long deadline = System.nanoTime() + within.toNanos();
            while (ended.get() < subscribed.get() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(ended.get()).as("waits ended of those subscribed").isEqualTo(subscribed.get());
        }

        @Override
        public void close() {
            fds.forEach(EventFd::close);
        }
    }
}
