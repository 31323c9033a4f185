package io.gpusync.reactor.backends;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.BlockingWaiter;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.test.gl.EglProducer;
import io.gpusync.gl.EglReusableSync;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * OpenGL/EGL (Mesa surfaceless + llvmpipe here) through the engine: every GL/EGL waiter is a blocking waiter
 * whose probe binds a context, so the engine never probes it on the subscribing thread (an event loop, a
 * Reactor {@code parallel} thread): its first probe and its waits in slices run on the threads the GL backend lends
 * the engine ({@code gpusync-egl-N}), which complete the wait — platform threads with no GL context of their own,
 * which is what the backend's share-group context pool is for ({@code GLsync} waits) and what {@code EGLSync} waits
 * do not need.
 */
class GlThroughEngineTest {
    /** Fences on this producer's 4096 × 4096 pbuffer take llvmpipe real time, so they are pending when awaited. */
    private static final int HEAVY_SIZE = 4096;
    private static EglProducer producer;
    private static EglProducer heavy;
    private static SyncEngine engine;

    @BeforeAll
    static void open() {
        try {
            producer = EglProducer.openSurfaceless();
            heavy = EglProducer.openSurfaceless(HEAVY_SIZE, HEAVY_SIZE);
        } catch (SyncNotSupportedException absent) {
            assumeTrue(false, "no EGL/GLES driver with the surfaceless platform here: " + absent.getMessage());
        }
        engine = GpuSync.builder().name("gl").build();
    }

    @AfterAll
    static void close() {
        if (engine != null) {
            engine.dispose();
        }
        if (heavy != null) {
            heavy.close();
        }
        if (producer != null) {
            producer.close();
        }
    }

    @Test
    void glAndEglWaitersTakeTheBlockingPath() {
        SyncPoint.OpenGLSync glFence = producer.fence(1);
        SyncPoint.OpenGLSync eglFence = producer.eglFence(1);
        try (EglReusableSync reusable = producer.reusableSync()) {
            assertThat(engine.pathFor(glFence.waiter())).isEqualTo(WaitPath.BLOCKING);
            assertThat(engine.pathFor(eglFence.waiter())).isEqualTo(WaitPath.BLOCKING);
            assertThat(engine.pathFor(reusable.point().waiter())).isEqualTo(WaitPath.BLOCKING);
            reusable.point().waiter().close();
        } finally {
            glFence.waiter().close();
            eglFence.waiter().close();
        }
    }

    @Test
    void aHostSignalledReusableSyncCompletesTheMono() {
        try (EglReusableSync sync = producer.reusableSync()) {
            SyncPoint point = sync.point();
            StepVerifier.create(engine.await(point, Duration.ofSeconds(10)))
                    .expectSubscription()
                    .expectNoEvent(Duration.ofMillis(20))
                    .then(sync::signal)
                    .verifyComplete();
            assertThat(engine.pendingWaits()).isZero();
            point.waiter().close();
        }
    }

    @Test
    void aQueueSignalledGlFenceCompletesTheMonoAndLeavesNoContextCurrent() {
        SyncPoint.OpenGLSync point = heavy.fence(4);
        AtomicReference<MemorySegment> contextAtDelivery = new AtomicReference<>();
        AtomicReference<String> threadAtDelivery = new AtomicReference<>();
        StepVerifier.create(engine.await(point, Duration.ofSeconds(60))
                        .doOnSuccess(v -> {
                            contextAtDelivery.set(Egl.eglGetCurrentContext());
                            threadAtDelivery.set(Thread.currentThread().getName());
                        }))
                .verifyComplete();
        // the GL backend's own thread (no GL context of its own) waited, borrowing a share-group context per
        // slice and restoring its binding, and delivered there: no hand-off, and no engine thread made a GL call;
        // even a fence already signalled at subscription is probed there, not on this thread
        assertThat(threadAtDelivery.get()).startsWith("gpusync-egl-");
        assertThat(contextAtDelivery.get()).isEqualTo(Egl.EGL_NO_CONTEXT());
        assertThat(engine.pendingWaits()).isZero();
        point.waiter().close();
    }

    @Test
    void glWaitsSubscribedFromANettyLoopNeverProbeOrBindAContextOnTheLoop() {
        MultiThreadIoEventLoopGroup serverLoops = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        Queue<String> eglThreads = new ConcurrentLinkedQueue<>();
        List<SyncPoint.OpenGLSync> points = List.of(producer.fence(1), producer.eglFence(1), heavy.fence(4));
        try {
            Scheduler loop = Schedulers.fromExecutor(serverLoops.next());
            Flux<Void> waits = Flux.fromIterable(points)
                    .flatMap(p -> engine.await(new Recording(p.waiter(), eglThreads), Duration.ofSeconds(60))
                            .subscribeOn(loop));
            StepVerifier.create(waits).verifyComplete();
            assertThat(eglThreads).isNotEmpty()
                    .allSatisfy(name -> assertThat(name).startsWith("gpusync-egl-"));
        } finally {
            points.forEach(p -> p.waiter().close());
            serverLoops.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        }
    }

    /** A GL/EGL waiter that records the threads that probe it or wait on it (each binds or queries EGL). */
    private record Recording(SyncWaiter inner, Queue<String> threads) implements BlockingWaiter {
        @Override
        public void await(Duration timeout) {
            threads.add(Thread.currentThread().getName());
            inner.await(timeout);
        }

        @Override
        public boolean isSignaled() {
            threads.add(Thread.currentThread().getName());
            return inner.isSignaled();
        }

        @Override
        public BackendKind backend() {
            return inner.backend();
        }

        @Override
        public java.util.concurrent.Executor waitThreads() {
            return ((BlockingWaiter) inner).waitThreads();
        }
    }

    @Test
    void aQueueSignalledEglFenceCompletesTheMono() {
        SyncPoint.OpenGLSync point = heavy.eglFence(4);
        StepVerifier.create(engine.await(point, Duration.ofSeconds(30))).verifyComplete();
        assertThat(engine.pendingWaits()).isZero();
        point.waiter().close();
    }

    @Test
    void anUnsignalledSyncTimesOutAndTheWaitIsFreed() {
        try (EglReusableSync sync = producer.reusableSync()) {
            StepVerifier.create(engine.await(sync.point(), Duration.ofMillis(50)))
                    .expectError(SyncTimeoutException.class)
                    .verify(Duration.ofSeconds(10));
            assertThat(engine.pendingWaits()).isZero();
            sync.point().waiter().close();
        }
    }

    @Test
    void aCancelledWaitIsFreedAndALateSignalDeliversNothing() throws Exception {
        try (EglReusableSync sync = producer.reusableSync()) {
            AtomicBoolean delivered = new AtomicBoolean();
            Disposable d = engine.await(sync.point(), SyncPoint.FOREVER)
                    .subscribe(v -> { }, e -> delivered.set(true), () -> delivered.set(true));
            assertThat(engine.pendingWaits()).isEqualTo(1);
            d.dispose();
            assertThat(engine.pendingWaits()).isZero();
            sync.signal();
            Thread.sleep(30);
            assertThat(delivered).isFalse();
            // the sync is still usable: a new wait on it completes at once
            StepVerifier.create(engine.await(sync.point(), Duration.ofSeconds(10))).verifyComplete();
            sync.point().waiter().close();
        }
    }

    @Test
    void thirtyTwoConcurrentWaitsOnFencesAllComplete() {
        List<SyncPoint.OpenGLSync> fences = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            fences.add(i % 2 == 0 ? heavy.fence(1) : heavy.eglFence(1));
        }
        Set<String> threads = ConcurrentHashMap.newKeySet();
        Set<MemorySegment> contexts = ConcurrentHashMap.newKeySet();
        try {
            var all = Flux.fromIterable(fences)
                    .flatMap(f -> engine.await(f, Duration.ofSeconds(60)).doOnSuccess(v -> {
                        threads.add(Thread.currentThread().getName());
                        contexts.add(Egl.eglGetCurrentContext());
                    }), 32)
                    .then();
            StepVerifier.create(all).verifyComplete();
            assertThat(engine.pendingWaits()).isZero();
            assertThat(contexts).containsExactly(Egl.EGL_NO_CONTEXT());
            System.out.println("GL through the engine: 32 fence waits delivered on " + threads);
        } finally {
            fences.forEach(f -> f.waiter().close());
        }
    }
}
