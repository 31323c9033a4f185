package io.gpusync.reactor;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.util.concurrent.EventExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Under BlockHound (with Reactor's and Netty's integrations: Reactor {@code parallel} threads and Netty event
 * loops are non-blocking), subscribing to and completing engine waits of every path blocks no non-blocking
 * thread — including a blocking-path wait that finds the waiter pool full. Blocking calls are recorded
 * rather than thrown, so that each test states plainly that there were none. Besides the JDK's own blocking
 * methods, {@link ThreadPoolExecutor#toString()} counts as blocking: it takes the executor's lock (as a
 * rejected {@code execute} does when it builds its message).
 */
class EngineBlockHoundTest {
    private static final Queue<String> BLOCKING_CALLS = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void installBlockHound() {
        BlockHound.install(builder -> builder
                .markAsBlocking(ThreadPoolExecutor.class, "toString", "()Ljava/lang/String;")
                .blockingMethodCallback(m -> {
                    StackTraceElement[] stack = new Throwable().getStackTrace();
                    if (!insideAnAllowedFrameThatPredatesBlockHound(stack)) {
                        BLOCKING_CALLS.add(m + " on " + Thread.currentThread().getName() + java.util.Arrays.toString(stack));
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

    @BeforeEach
    void noneYet() {
        BLOCKING_CALLS.clear();
    }

    @AfterEach
    void noBlockingCallOnANonBlockingThread() {
        assertThat(BLOCKING_CALLS).isEmpty();
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
}
