package io.gpusync.reactor;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncException;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.kit.ProbeLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A probe that does not return — a driver blocked on a lock inside its status query, as NVIDIA's {@code glIsSync} was
 * seen on an H200 while another thread released a GL sync — delays no wait of another driver family on the same
 * engine's pollers: the waits already on its poller and those that come later complete promptly. The stuck wait still
 * ends with its probe's outcome once the probe returns, waits of its own family are served again, and the extra
 * poller thread that took the other waits ends.
 *
 * <p>Bounds are generous for a loaded 2-core box: the probe is stuck for up to 5 s, the other waits must end within
 * 500 ms of their signal (a stuck probe is found within 5–10 ms).
 */
class StuckProbeTest {
    private static final long PROMPTLY_MS = 500;
    private static final long STUCK_SECONDS = 5;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final SyncEngine engine = GpuSync.builder().name("stuck-probe").build();
    private final CpuTimeline timeline = new CpuTimeline();
    private final List<StuckableProbe> sources = new ArrayList<>();

    @AfterEach
    void releaseAndDispose() {
        sources.forEach(s -> s.release.countDown());
        engine.dispose();
    }

    @Test
    void waitsOfAnotherFamilyCompletePromptlyWhileAProbeOnTheirPollerIsStuck() throws Exception {
        List<CompletableFuture<Void>> ordinary = probeOnlyWaits(1, 10); // on the poller before its probe sticks
        StuckableProbe gl = stuckable();
        CompletableFuture<Void> stuckWait = engine.await(gl, TIMEOUT).toFuture();
        assertThat(gl.entered.await(10, TimeUnit.SECONDS)).as("the poller is inside the stuck probe").isTrue();
        ordinary.addAll(probeOnlyWaits(11, 20)); // arriving while it is stuck

        timeline.signal(20);
        CompletableFuture.allOf(ordinary.toArray(CompletableFuture[]::new)).get(PROMPTLY_MS, TimeUnit.MILLISECONDS);

        assertThat(stuckWait).as("its probe has not returned").isNotDone();
        gl.signalled = true;
        gl.release.countDown();
        stuckWait.get(10, TimeUnit.SECONDS); // ends with the outcome of the probe that was stuck
    }

    @Test
    void waitsOfTheStuckFamilyAreServedAgainOnceTheProbeReturns() throws Exception {
        StuckableProbe gl = stuckable();
        CompletableFuture<Void> stuckWait = engine.await(gl, TIMEOUT).toFuture();
        assertThat(gl.entered.await(10, TimeUnit.SECONDS)).isTrue();
        StuckableProbe otherGl = new StuckableProbe(false, BackendKind.OPENGL); // same family, probes fine
        CompletableFuture<Void> sameFamily = engine.await(otherGl, TIMEOUT).toFuture();
        List<CompletableFuture<Void>> ordinary = probeOnlyWaits(1, 5);
        timeline.signal(5);
        CompletableFuture.allOf(ordinary.toArray(CompletableFuture[]::new)).get(PROMPTLY_MS, TimeUnit.MILLISECONDS);

        otherGl.signalled = true;
        gl.release.countDown(); // returns "not signalled": the wait goes on being probed
        assertThat(sameFamily.get(10, TimeUnit.SECONDS)).isNull();
        assertThat(stuckWait).isNotDone();
        gl.signalled = true;
        assertThat(stuckWait.get(10, TimeUnit.SECONDS)).isNull();
    }

    @Test
    void aStuckProbeThatFailsFailsItsWait() throws Exception {
        StuckableProbe gl = stuckable();
        CompletableFuture<Void> stuckWait = engine.await(gl, TIMEOUT).toFuture();
        assertThat(gl.entered.await(10, TimeUnit.SECONDS)).isTrue();
        awaitPollerThreads(2);
        assertThat(pollerThreads()).as("the guard has moved the poller's waits to a new thread").isEqualTo(2);
        gl.failure = new SyncException(ErrorKind.FATAL, BackendKind.OPENGL, "context lost while the probe waited",
                null);
        gl.release.countDown();
        assertThatThrownBy(() -> stuckWait.get(10, TimeUnit.SECONDS))
                .hasRootCauseMessage("context lost while the probe waited");
    }

    @Test
    void theExtraPollerThreadEndsOnceTheStuckProbeReturns() throws Exception {
        StuckableProbe gl = stuckable();
        CompletableFuture<Void> stuckWait = engine.await(gl, TIMEOUT).toFuture();
        assertThat(gl.entered.await(10, TimeUnit.SECONDS)).isTrue();
        List<CompletableFuture<Void>> ordinary = probeOnlyWaits(1, 1);
        timeline.signal(1);
        ordinary.getFirst().get(PROMPTLY_MS, TimeUnit.MILLISECONDS); // served by a new poller thread
        assertThat(pollerThreads()).as("the stuck poller thread and the one that took its waits").isEqualTo(2);

        gl.signalled = true;
        gl.release.countDown();
        stuckWait.get(10, TimeUnit.SECONDS);
        awaitPollerThreads(1);
        assertThat(pollerThreads()).as("the stuck one ended once its probe returned").isEqualTo(1);
        engine.dispose();
        assertThat(EngineThreadsProbe.threadsOf(engine)).as("the engine's threads, the guard included").isZero();
    }

    @Test
    void atMostFourPollerThreadsAreLeftStuckBesidesThePollers() throws Exception {
        List<CompletableFuture<Void>> stuckWaits = new ArrayList<>();
        List<StuckableProbe> stuck = new ArrayList<>();
        for (BackendKind family : List.of(BackendKind.OPENGL, BackendKind.VULKAN, BackendKind.OPENCL,
                BackendKind.CUDA, BackendKind.D3D12)) {
            StuckableProbe s = stuckable(family);
            stuck.add(s);
            stuckWaits.add(engine.await(s, TIMEOUT).toFuture());
            assertThat(s.entered.await(10, TimeUnit.SECONDS)).as(family + " probe stuck on a poller").isTrue();
        }
        StuckableProbe sixth = stuckable(BackendKind.METAL);
        stuckWaits.add(engine.await(sixth, TIMEOUT).toFuture());
        Thread.sleep(200); // many guard ticks: a sixth thread would be made in this time
        assertThat(pollerThreads()).as("4 stuck threads and the one stuck in the fifth probe")
                .isEqualTo(1 + SpinThenPoll.MAX_STRANDED);
        assertThat(sixth.entered.getCount()).as("no thread left for the sixth family's probe").isOne();

        for (StuckableProbe s : sources) {
            s.signalled = true;
            s.release.countDown();
        }
        CompletableFuture.allOf(stuckWaits.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        awaitPollerThreads(1);
        assertThat(pollerThreads()).isEqualTo(1);
    }

    private StuckableProbe stuckable() {
        return stuckable(BackendKind.OPENGL);
    }

    private StuckableProbe stuckable(BackendKind family) {
        StuckableProbe s = new StuckableProbe(true, family);
        sources.add(s);
        return s;
    }

    /** Probe-only waits of another family (CPU) on points {@code from..to} of the timeline. */
    private List<CompletableFuture<Void>> probeOnlyWaits(int from, int to) {
        List<CompletableFuture<Void>> waits = new ArrayList<>();
        for (int v = from; v <= to; v++) {
            waits.add(engine.await(HostWaiters.probeOnly(timeline.at(v)), TIMEOUT).toFuture());
        }
        return waits;
    }

    private void awaitPollerThreads(long n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (pollerThreads() != n && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }

    private long pollerThreads() {
        String prefix = "gpusync-" + engine.name() + "-poller-";
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    /**
     * A probe-only source of one family whose first probe on a poller thread (the engine's first probe, on
     * the subscribing thread, is left alone) parks until released, at most {@value #STUCK_SECONDS} s, as a driver
     * call waiting on a lock would; its later probes return at once.
     */
    static final class StuckableProbe implements SyncWaiter {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        private final AtomicBoolean sticks;
        private final BackendKind family;
        volatile boolean signalled;
        volatile SyncException failure;

        StuckableProbe(boolean sticks, BackendKind family) {
            this.sticks = new AtomicBoolean(sticks);
            this.family = family;
        }

        @Override
        public boolean isSignaled() {
            if (Thread.currentThread().getName().contains("-poller-") && sticks.compareAndSet(true, false)) {
                entered.countDown();
                try {
                    release.await(STUCK_SECONDS, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (failure != null) {
                throw failure;
            }
            return signalled;
        }

        @Override
        public void await(Duration timeout) {
            ProbeLoop.await(this, timeout);
        }

        @Override
        public BackendKind backend() {
            return family;
        }

        @Override
        public void close() {
        }
    }
}
