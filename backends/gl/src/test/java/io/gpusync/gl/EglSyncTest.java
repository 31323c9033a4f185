package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.GlBackend;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.kit.NativeAnchor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import io.gpusync.test.gl.EglProducer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** EGL syncs (fence and host-signalled reusable): waits that need no GL context (Mesa surfaceless). */
class EglSyncTest {
    private static EglProducer producer;

    @BeforeAll
    static void open() {
        producer = GlTestSupport.producer();
    }

    @AfterAll
    static void close() {
        if (producer != null) {
            producer.close();
        }
    }

    /** Runs {@code task} on a new platform thread (the common pool has one thread on a 2-core machine). */
    private static CompletableFuture<Void> onNewThread(Runnable task) {
        return CompletableFuture.runAsync(task, EglSyncTest::newThread);
    }

    private static void newThread(Runnable r) {
        Thread.ofPlatform().daemon().start(r);
    }

    /** Blocks until {@code waiting} has (very probably) entered the native wait; it must not be done yet. */
    private static void letItBlock(CompletableFuture<?> waiting) throws InterruptedException {
        Thread.sleep(50);
        assertThat(waiting).as("still blocked in eglClientWaitSyncKHR").isNotDone();
    }

    @Test
    void aHostSignalFromAnotherThreadWakesAThreadBlockedInAwait() throws Exception {
        try (EglReusableSync sync = producer.reusableSync()) {
            SyncPoint.OpenGLSync point = sync.point();
            assertThat(point.glsync()).isEqualTo(sync.handle());
            assertThat(point.platform()).isEqualTo(GlBackend.EGL);
            assertThat(point.backend()).isEqualTo(BackendKind.OPENGL);
            assertThat(point.waiter()).isInstanceOf(BlockingWaiter.class);

            CompletableFuture<MemoryContext> waiting = CompletableFuture.supplyAsync(() -> {
                point.await(Duration.ofSeconds(30));
                return new MemoryContext(GlTestSupport.currentContext());
            }, EglSyncTest::newThread);
            letItBlock(waiting);
            onNewThread(sync::signal).get(5, TimeUnit.SECONDS);
            assertThat(waiting.get(5, TimeUnit.SECONDS).context()).as("no GL context was ever bound")
                    .isEqualTo(Egl.EGL_NO_CONTEXT());
            point.waiter().close();
        }
    }

    private record MemoryContext(java.lang.foreign.MemorySegment context) {
    }

    @Test
    void anEglFenceAfterQueuedClearsIsAwaitedWithoutAnyGlContext() throws Exception {
        SyncPoint.OpenGLSync point = producer.eglFence(10);
        onNewThread(() -> point.await(Duration.ofSeconds(30))).get(30, TimeUnit.SECONDS);
        assertThat(point.isSignaled()).isTrue();
        point.waiter().close();
    }

    @Test
    void aProbeFollowsTheHostSignalAndReset() {
        try (EglReusableSync sync = producer.reusableSync()) {
            SyncPoint point = sync.point();
            assertThat(point.isSignaled()).isFalse();
            sync.signal();
            assertThat(point.isSignaled()).isTrue();
            sync.unsignal();
            assertThat(point.isSignaled()).isFalse();
            point.waiter().close();
        }
    }

    @Test
    void aSyncNeverSignalledTimesOutNoEarlierThanTheTimeout() {
        try (EglReusableSync sync = producer.reusableSync()) {
            for (Duration timeout : List.of(Duration.ofMillis(100), Duration.ofMillis(3), Duration.ofNanos(700_000))) {
                long start = System.nanoTime();
                assertThatThrownBy(() -> sync.point().await(timeout))
                        .isInstanceOf(SyncTimeoutException.class)
                        .hasMessageContaining("EGLSync 0x" + Long.toHexString(sync.handle().address()));
                assertThat(System.nanoTime() - start).as("waited at least " + timeout)
                        .isGreaterThanOrEqualTo(timeout.toNanos());
            }
            sync.point().waiter().close();
        }
    }

    @Test
    void zeroIsAProbeAndForeverWaitsUntilSignalled() throws Exception {
        try (EglReusableSync sync = producer.reusableSync()) {
            SyncPoint point = sync.point();
            assertThatThrownBy(() -> point.await(Duration.ZERO)).isInstanceOf(SyncTimeoutException.class)
                    .hasMessageContaining("0 (probe)");
            assertThatThrownBy(() -> point.await(Duration.ofNanos(1))).isInstanceOf(SyncTimeoutException.class);
            CompletableFuture<Void> forever = onNewThread(() -> point.await(SyncPoint.FOREVER));
            letItBlock(forever);
            sync.signal();
            forever.get(5, TimeUnit.SECONDS);
            point.await(Duration.ZERO);
            point.await(Duration.ofNanos(1));
            assertThatThrownBy(() -> point.await(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
            point.waiter().close();
        }
    }

    @Test
    void closingDuringAWaitDefersEglDestroySyncUntilTheWaitReturnsAndDestroysExactlyOnce() throws Exception {
        EglReusableSync sync = producer.reusableSync();
        SyncPoint point = sync.point();
        NativeAnchor anchor = ((EglSyncWaiter) point.waiter()).anchor();
        assertThat(anchor.isAdopted()).isTrue();
        CompletableFuture<Void> waiting = onNewThread(() -> point.await(Duration.ofMillis(400)));
        letItBlock(waiting);

        point.waiter().close();
        sync.close();
        sync.close();
        assertThat(anchor.isReleased()).as("not while the wait is in progress").isFalse();
        assertThat(EglSyncWaiter.syncType(producer.display(), sync.handle())).as("still a live sync")
                .isEqualTo(Egl.EGL_SYNC_REUSABLE_KHR());

        assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(SyncTimeoutException.class);
        // NativeAnchor runs its release action once; the EGL error below shows that it really destroyed the sync
        assertThat(anchor.isReleased()).as("destroyed after the wait").isTrue();
        assertThatThrownBy(() -> EglSyncWaiter.syncType(producer.display(), sync.handle()))
                .isInstanceOf(SyncBackendException.class).hasMessageContaining("EGL_BAD_PARAMETER");
        assertThatThrownBy(sync::signal).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> point.await(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theSyncLivesUntilBothTheProducerAndThePointAreClosed() {
        EglReusableSync sync = producer.reusableSync();
        SyncPoint point = sync.point();
        NativeAnchor anchor = ((EglSyncWaiter) point.waiter()).anchor();
        sync.close();
        assertThat(anchor.isReleased()).isFalse();
        assertThat(point.isSignaled()).isFalse(); // the point still holds it
        point.waiter().close();
        assertThat(anchor.isReleased()).isTrue();
        assertThatThrownBy(() -> EglSyncWaiter.syncType(producer.display(), sync.handle()))
                .isInstanceOf(SyncBackendException.class).hasMessageContaining("EGL_BAD_PARAMETER");
    }

    @Test
    void aBorrowedSyncIsNeverDestroyedByGpusync() {
        try (EglReusableSync sync = producer.reusableSync()) {
            SyncPoint borrowed = EglSyncs.borrow(producer.display().address(), sync.handle().address());
            sync.signal();
            borrowed.await(Duration.ofSeconds(1));
            NativeAnchor anchor = ((EglSyncWaiter) borrowed.waiter()).anchor();
            assertThat(anchor.isAdopted()).isFalse();
            borrowed.waiter().close();
            assertThat(anchor.isReleased()).as("given up").isTrue();
            assertThat(EglSyncWaiter.syncType(producer.display(), sync.handle())).as("still a live sync")
                    .isEqualTo(Egl.EGL_SYNC_REUSABLE_KHR());
            assertThat(sync.point().isSignaled()).isTrue();
            sync.point().waiter().close();
        }
    }

    @Test
    void manyThreadsWaitingOnOneSyncAreAllWokenByOneSignal() throws Exception {
        try (EglReusableSync sync = producer.reusableSync()) {
            List<CompletableFuture<Void>> waits = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                waits.add(onNewThread(() -> sync.point().await(Duration.ofSeconds(30))));
            }
            Thread.sleep(50);
            assertThat(waits).noneMatch(CompletableFuture::isDone);
            sync.signal();
            CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            sync.point().waiter().close();
        }
    }

    @Test
    void invalidHandlesBecomeEglErrorsNotCrashes() {
        assertThatThrownBy(() -> EglSyncs.borrow(producer.display().address(), 0xdead0L))
                .isInstanceOf(SyncBackendException.class)
                .hasMessageContaining("EGL_BAD_PARAMETER")
                .satisfies(e -> {
                    SyncBackendException be = (SyncBackendException) e;
                    assertThat(be.nativeCode()).isEqualTo(Egl.EGL_BAD_PARAMETER());
                    assertThat(be.nativeCodeName()).isEqualTo("EGL_BAD_PARAMETER");
                    assertThat(be.kind()).isEqualTo(ErrorKind.CONFIGURATION);
                });
        assertThatThrownBy(() -> EglSyncs.adopt(0x1234_5000L, 0xdead0L))
                .isInstanceOf(SyncBackendException.class).hasMessageContaining("EGL_BAD_DISPLAY");
        assertThatThrownBy(() -> EglSyncs.borrow(producer.display().address(), 0L))
                .isInstanceOf(io.gpusync.SyncInvalidArgumentException.class);
    }

    @Test
    void measureTheWakeLatencyOfAHostSignal() throws Exception {
        int n = 300;
        long[] latencies = new long[n];
        try (EglReusableSync sync = producer.reusableSync()) {
            for (int i = 0; i < n; i++) {
                sync.unsignal();
                AtomicLong woke = new AtomicLong();
                CountDownLatch started = new CountDownLatch(1);
                Thread waiter = Thread.ofPlatform().start(() -> {
                    started.countDown();
                    try {
                        sync.point().await(Duration.ofSeconds(10));
                        woke.set(System.nanoTime());
                    } catch (RuntimeException e) {
                        e.printStackTrace();
                    }
                });
                started.await();
                Thread.sleep(1);
                long signalled = System.nanoTime();
                sync.signal();
                waiter.join();
                latencies[i] = woke.get() - signalled;
            }
            sync.point().waiter().close();
        }
        Arrays.sort(latencies);
        System.out.printf("EGL reusable sync: host signal → waiter wakes: p50 %.1f µs, p90 %.1f µs%n",
                latencies[n / 2] / 1e3, latencies[n * 9 / 10] / 1e3);
        assertThat(latencies[n / 2]).isPositive();
    }
}
