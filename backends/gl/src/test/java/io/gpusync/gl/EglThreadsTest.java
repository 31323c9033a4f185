package io.gpusync.gl;

import io.gpusync.SyncPoint;
import io.gpusync.test.gl.EglProducer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Where this backend makes its EGL and GL calls (README, "Driver hazards": NVIDIA's EGL deadlocks a thread's EGL
 * teardown, at its end, against a {@code vkDestroyDevice} elsewhere in the process). A thread without a context
 * current (an engine's pool thread, a housekeeping lane, a carrier) hands them to gpusync's EGL threads, which never
 * end; a thread with a context current is the application's EGL thread and keeps them (Mesa llvmpipe here).
 */
class EglThreadsTest {
    private static EglProducer producer;

    @BeforeAll
    static void open() {
        producer = GlTestSupport.producer();
        producer.fence(1).await(Duration.ofSeconds(30)); // warm-up
    }

    @AfterAll
    static void close() {
        if (producer != null) {
            producer.close();
        }
    }

    private static Set<Thread> eglThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("gpusync-egl-"))
                .collect(Collectors.toSet());
    }

    /** Runs {@code action} on a fresh platform thread, which then ends; rethrows what it threw. */
    private static void onThreadThatEnds(Runnable action) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = Thread.ofPlatform().name("short-lived").start(() -> {
            try {
                action.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.join(60_000);
        assertThat(t.isAlive()).isFalse();
        assertThat(failure.get()).isNull();
    }

    @Test
    void waitsProbesSignalsAndReleasesFromAThreadThatEndsRunOnEglThreadsThatOutliveIt() throws Exception {
        onThreadThatEnds(() -> {
            SyncPoint.OpenGLSync glFence = producer.fence(1);
            SyncPoint.OpenGLSync eglFence = producer.eglFence(1);
            glFence.waiter().await(Duration.ofSeconds(30));
            eglFence.waiter().await(Duration.ofSeconds(30));
            assertThat(glFence.waiter().isSignaled()).isTrue();
            assertThat(eglFence.waiter().isSignaled()).isTrue();
            try (EglReusableSync reusable = producer.reusableSync()) {
                reusable.signal();
                reusable.point().waiter().await(Duration.ofSeconds(5));
                reusable.point().waiter().close();
            }
            glFence.waiter().close();
            eglFence.waiter().close();
        });
        Set<Thread> threads = eglThreads();
        assertThat(threads).isNotEmpty();
        Thread.sleep(1_500); // longer than a housekeeping lane or an idle pool thread lives
        assertThat(threads).allSatisfy(t -> assertThat(t.isAlive()).as(t.getName()).isTrue());
        assertThat(threads).allSatisfy(t -> assertThat(t.isDaemon()).as(t.getName()).isTrue());
    }

    @Test
    void concurrentWaitsFromThreadsWithoutAContextAllCompleteOnEglThreads() throws Exception {
        Set<String> failures = ConcurrentHashMap.newKeySet();
        List<Thread> waiters = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            SyncPoint.OpenGLSync fence = producer.fence(4);
            waiters.add(Thread.ofPlatform().name("waiter-" + i).start(() -> {
                try {
                    fence.waiter().await(Duration.ofSeconds(60));
                    fence.waiter().close();
                } catch (Throwable e) {
                    failures.add(e.toString());
                }
            }));
        }
        for (Thread t : waiters) {
            t.join(60_000);
        }
        assertThat(failures).isEmpty();
        assertThat(EglThreads.started()).isPositive();
        assertThat(eglThreads()).hasSize(EglThreads.started()); // none has ended
    }

    @Test
    void aThreadWithTheProducerCurrentMakesItsCallsItself() {
        SyncPoint.OpenGLSync fence = producer.fence(1);
        AtomicReference<String> ranOn = new AtomicReference<>();
        producer.runCurrent(() -> {
            int before = EglThreads.started();
            EglThreads.run(() -> ranOn.set(Thread.currentThread().getName()));
            fence.waiter().await(Duration.ofSeconds(30));
            assertThat(EglThreads.started()).isEqualTo(before);
        });
        assertThat(ranOn.get()).doesNotStartWith("gpusync-egl-");
        fence.waiter().close();
    }

    @Test
    void theWaitersLendTheseThreadsToAnEngineAndTheirCallsThereRunInline() throws Exception {
        SyncPoint.OpenGLSync fence = producer.fence(1);
        Executor lender = ((io.gpusync.spi.BlockingWaiter) fence.waiter()).waitThreads();
        assertThat(lender).isNotNull();
        int before = EglThreads.started();
        AtomicReference<String> ranOn = new AtomicReference<>();
        AtomicReference<String> sliceOn = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        lender.execute(() -> {
            ranOn.set(Thread.currentThread().getName());
            EglThreads.run(() -> sliceOn.set(Thread.currentThread().getName())); // no hand-off from here
            fence.waiter().await(Duration.ofSeconds(30));
            done.countDown();
        });
        assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
        assertThat(ranOn.get()).startsWith("gpusync-egl-").isEqualTo(sliceOn.get());
        assertThat(EglThreads.started()).isLessThanOrEqualTo(before + 1);
        fence.waiter().close();
    }

    @Test
    void theLenderRefusesBeyondItsBoundAndAFailingOrInterruptingTaskLeavesItsThreadServing() throws Exception {
        Executor lender = EglThreads.lender();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(EglThreads.MAX_LENT);
        for (int i = 0; i < EglThreads.MAX_LENT; i++) {
            lender.execute(() -> {
                running.countDown();
                awaitQuietly(release);
            });
        }
        try {
            assertThat(running.await(60, TimeUnit.SECONDS)).isTrue();
            assertThatThrownBy(() -> lender.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
        } finally {
            release.countDown();
        }
        awaitEveryEglThreadIdle(); // a lent task's slot frees as it returns, before its thread is listed idle
        int threads = EglThreads.started();
        CountDownLatch served = new CountDownLatch(1);
        AtomicReference<Boolean> interruptedAtStart = new AtomicReference<>();
        awaitAccepted(lender, () -> {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("a task's bug, reported and survived");
        });
        awaitAccepted(lender, () -> {
            interruptedAtStart.set(Thread.currentThread().isInterrupted());
            served.countDown();
        });
        assertThat(served.await(60, TimeUnit.SECONDS)).isTrue();
        assertThat(interruptedAtStart.get()).isFalse();
        assertThat(EglThreads.started()).as("no thread ended, so none was replaced").isEqualTo(threads);
        assertThat(eglThreads()).hasSize(threads);
    }

    @Test
    void waitsOnVirtualThreadsParkThemAndLeaveTheirCarriersFree() throws Exception {
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
                Runtime.getRuntime().availableProcessors());
        try (EglReusableSync reusable = producer.reusableSync()) {
            List<Thread> waiting = new ArrayList<>();
            Set<String> failures = ConcurrentHashMap.newKeySet();
            for (int i = 0; i < 2 * carriers; i++) { // more than the carriers: a wait in the driver would hold one each
                waiting.add(Thread.ofVirtual().start(() -> {
                    try {
                        reusable.point().waiter().await(Duration.ofSeconds(60));
                    } catch (Throwable e) {
                        failures.add(e.toString());
                    }
                }));
            }
            Thread.sleep(300); // into their waits
            Thread other = Thread.ofVirtual().start(() -> { });
            assertThat(other.join(Duration.ofSeconds(5))).as("a virtual thread got a carrier meanwhile").isTrue();
            assertThat(waiting).allSatisfy(t -> assertThat(t.isAlive()).as("still waiting").isTrue());
            reusable.signal();
            for (Thread t : waiting) {
                assertThat(t.join(Duration.ofSeconds(30))).isTrue();
            }
            assertThat(failures).isEmpty();
            reusable.point().waiter().close();
        }
    }

    /**
     * Waits until every gpusync-egl thread is parked as idle (its blocker is the thread set, not a task's latch), so that
     * a task handed over next finds an idle thread rather than one still finishing the task before.
     */
    private static void awaitEveryEglThreadIdle() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!eglThreads().stream().allMatch(t -> LockSupport.getBlocker(t) instanceof EglThreads)) {
            assertThat(System.nanoTime() - deadline).as("gpusync-egl threads still busy").isNegative();
            Thread.sleep(10);
        }
    }

    /** Hands {@code task} over once the tasks of the test before have returned (the lender refuses until then). */
    private static void awaitAccepted(Executor lender, Runnable task) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                lender.execute(task);
                return;
            } catch (RejectedExecutionException full) {
                assertThat(System.nanoTime() - deadline).isNegative();
                Thread.sleep(10);
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
