package io.gpusync.gl;

import io.gpusync.testsuite.ChildJvm;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.bindings.egl.PFNEGLCREATESYNCKHRPROC;
import io.gpusync.bindings.egl.PFNEGLDESTROYSYNCKHRPROC;
import io.gpusync.bindings.egl.PFNEGLSIGNALSYNCKHRPROC;
import io.gpusync.test.gl.EglProducer;
import io.gpusync.kit.NativeAnchor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Reusable EGL syncs that the application created and signals itself. {@link EglSyncs#adopt} refuses them (a wait
 * that the application's {@code eglSignalSyncKHR} ends could destroy the sync while Mesa still writes to it);
 * {@link EglReusableSync#adopt} takes them with an object whose claim covers the application's raw signals.
 */
class EglReusableSyncAdoptTest {
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

    @Test
    void eglSyncsAdoptRefusesAReusableSyncAndLeavesItToTheCaller() {
        MemorySegment display = producer.display();
        MemorySegment sync = createReusable(display);
        assertThatThrownBy(() -> EglSyncs.adopt(display, sync))
                .isInstanceOf(SyncInvalidArgumentException.class)
                .hasMessageContaining("reusable")
                .hasMessageContaining("EglReusableSync.adopt")
                .hasMessageContaining("EglSyncs.borrow");
        assertThatThrownBy(() -> EglSyncs.adopt(display.address(), sync.address()))
                .isInstanceOf(SyncInvalidArgumentException.class);
        assertThat(EglSyncWaiter.syncType(display, sync)).as("still alive, still the caller's")
                .isEqualTo(Egl.EGL_SYNC_REUSABLE_KHR());
        destroy(display, sync);
    }

    @Test
    void eglReusableSyncAdoptTakesAnApplicationsSyncEndToEnd() throws Exception {
        MemorySegment display = producer.display();
        MemorySegment sync = createReusable(display);
        EglReusableSync adopted = EglReusableSync.adopt(display.address(), sync.address());
        SyncPoint.OpenGLSync point = adopted.point();
        assertThat(adopted.handle()).isEqualTo(sync);
        assertThat(point.glsync()).isEqualTo(sync);
        NativeAnchor anchor = ((EglSyncWaiter) point.waiter()).anchor();
        assertThat(anchor.isAdopted()).isTrue();
        assertThat(point.isSignaled()).isFalse();

        // a thread blocked in the wait is woken by the application's own raw signal
        CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> point.await(Duration.ofSeconds(30)),
                r -> Thread.ofPlatform().daemon().start(r));
        Thread.sleep(50);
        assertThat(waiting).isNotDone();
        rawSignal(display, sync, Egl.EGL_SIGNALED_KHR());
        waiting.get(5, TimeUnit.SECONDS);
        assertThat(point.isSignaled()).isTrue();

        // and through the object
        adopted.unsignal();
        assertThatThrownBy(() -> point.await(Duration.ofMillis(5))).isInstanceOf(SyncTimeoutException.class);
        adopted.signal();
        point.await(Duration.ZERO);

        // closing the waiter first leaves the sync alive while the object is open
        point.waiter().close();
        assertThat(anchor.isReleased()).isFalse();
        rawSignal(display, sync, Egl.EGL_SIGNALED_KHR());
        adopted.close();
        assertThat(anchor.isReleased()).isTrue();
        assertThatThrownBy(() -> EglSyncWaiter.syncType(display, sync)).as("destroyed by gpusync")
                .isInstanceOf(SyncBackendException.class).hasMessageContaining("EGL_BAD_PARAMETER");
        assertThatThrownBy(adopted::signal).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void eglReusableSyncAdoptRefusesAFenceSyncAndBadHandles() {
        MemorySegment display = producer.display();
        SyncPoint.OpenGLSync fence = producer.eglFence(1);
        assertThatThrownBy(() -> EglReusableSync.adopt(display, fence.glsync()))
                .isInstanceOf(SyncInvalidArgumentException.class).hasMessageContaining("EglSyncs.adopt");
        fence.waiter().close();
        assertThatThrownBy(() -> EglReusableSync.adopt(display.address(), 0L))
                .isInstanceOf(SyncInvalidArgumentException.class);
        assertThatThrownBy(() -> EglReusableSync.adopt(display.address(), 0xdead0L))
                .isInstanceOf(SyncBackendException.class).hasMessageContaining("EGL_BAD_PARAMETER");
    }

    /**
     * The user-style pattern that used to be a use-after-free: the application signals an adopted reusable sync with
     * its own {@code eglSignalSyncKHR} while waiters wake and close concurrently. In a child JVM under glibc's
     * malloc checker, which aborts the process on heap corruption.
     */
    @Test
    void rawSignalsOnAdoptedReusableSyncsWhileWaitersCloseSurviveTheMallocChecker() throws Exception {
        assumeTrue(Files.isRegularFile(ChildJvm.MALLOC_DEBUG), "glibc's malloc checker is not installed");
        Map<String, String> env = new HashMap<>(ChildJvm.mallocChecked(165));
        env.put("EGL_PLATFORM", "surfaceless");
        String out = ChildJvm.runOk(RawSignalStress.class, List.of("-Xmx256m"), env, "3000");
        assertThat(out).contains("RAW SIGNAL STRESS OK");
    }

    /**
     * Runs in the child JVM: {@code THREADS} application threads, each in rounds for {@code args[0]} ms: create a
     * reusable sync, {@link EglReusableSync#adopt} it, start waiters that close the waiter as soon as they wake,
     * signal raw through the bindings, then close the object once the signal has returned. Exits 0 only if every
     * wait ended by the signal (or found the waiter already closed) and nothing else failed.
     */
    public static final class RawSignalStress {
        private static final int THREADS = 4;
        private static final int WAITERS = 3;

        public static void main(String[] args) throws Exception {
            long millis = Long.parseLong(args[0]);
            EglProducer producer = EglProducer.openSurfaceless(16, 16);
            MemorySegment display = producer.display();
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            AtomicLong rounds = new AtomicLong();
            AtomicLong closedBeforeWait = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> app = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                app.add(Thread.ofPlatform().name("app-" + t).start(() -> {
                    try {
                        while (System.nanoTime() < end && failure.get() == null) {
                            round(display, closedBeforeWait);
                            rounds.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            for (Thread t : app) {
                t.join();
            }
            producer.close();
            if (failure.get() != null) {
                failure.get().printStackTrace();
                System.exit(1);
            }
            System.out.println("RAW SIGNAL STRESS OK rounds=" + rounds.get() + " closedBeforeWait="
                    + closedBeforeWait.get());
            if (rounds.get() < THREADS) {
                System.exit(2);
            }
        }

        private static void round(MemorySegment display, AtomicLong closedBeforeWait) throws Exception {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            MemorySegment raw = createReusable(display);
            try (EglReusableSync sync = EglReusableSync.adopt(display, raw)) {
                SyncPoint point = sync.point();
                CountDownLatch ready = new CountDownLatch(WAITERS);
                List<CompletableFuture<Void>> waits = new ArrayList<>();
                for (int w = 0; w < WAITERS; w++) {
                    CompletableFuture<Void> done = new CompletableFuture<>();
                    waits.add(done);
                    Thread.ofPlatform().daemon().start(() -> {
                        ready.countDown();
                        try {
                            point.await(Duration.ofSeconds(10));
                            done.complete(null);
                        } catch (IllegalStateException closed) {
                            closedBeforeWait.incrementAndGet(); // another waiter thread closed it first
                            done.complete(null);
                        } catch (Throwable e) {
                            done.completeExceptionally(e);
                        } finally {
                            point.waiter().close(); // concurrently with the signal still inside Mesa
                        }
                    });
                }
                ready.await();
                LockSupport.parkNanos(random.nextLong(200_000)); // sometimes in the driver's wait, sometimes not
                rawSignal(display, sync.handle(), Egl.EGL_SIGNALED_KHR());
                for (CompletableFuture<Void> done : waits) {
                    done.get(20, TimeUnit.SECONDS);
                }
            } // closed after the raw signal returned: the last hold may drop here or in a waiter's close
        }
    }

    static MemorySegment createReusable(MemorySegment display) {
        MemorySegment fn = EglNative.Khr.require(EglNative.Khr.CREATE_SYNC, "eglCreateSyncKHR");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sync = PFNEGLCREATESYNCKHRPROC.invoke(fn, display, Egl.EGL_SYNC_REUSABLE_KHR(),
                    arena.allocateFrom(ValueLayout.JAVA_INT, Egl.EGL_NONE()));
            if (sync.equals(Egl.EGL_NO_SYNC_KHR())) {
                throw EglNative.eglFailure("eglCreateSyncKHR(EGL_SYNC_REUSABLE_KHR)");
            }
            return sync;
        }
    }

    /** The application's own {@code eglSignalSyncKHR}, through the bindings. */
    static void rawSignal(MemorySegment display, MemorySegment sync, int mode) {
        if (PFNEGLSIGNALSYNCKHRPROC.invoke(EglNative.Khr.SIGNAL_SYNC, display, sync, mode) == Egl.EGL_FALSE()) {
            throw EglNative.eglFailure("eglSignalSyncKHR");
        }
    }

    private static void destroy(MemorySegment display, MemorySegment sync) {
        if (PFNEGLDESTROYSYNCKHRPROC.invoke(EglNative.Khr.DESTROY_SYNC, display, sync) == Egl.EGL_FALSE()) {
            throw EglNative.eglFailure("eglDestroySyncKHR");
        }
    }
}
