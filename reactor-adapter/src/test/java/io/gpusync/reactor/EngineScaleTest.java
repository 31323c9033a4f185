package io.gpusync.reactor;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** Scale properties of the engine: many waits on few threads, nothing left behind. */
class EngineScaleTest {

    @Test
    void oneHundredThousandConcurrentHostTimelineWaitsAllCompleteOnAtMostFourEngineThreads() throws Exception {
        SyncEngine engine = GpuSync.builder().name("scale100k").build();
        try {
            CpuTimeline timeline = new CpuTimeline();
            int n = 100_000;
            CountDownLatch done = new CountDownLatch(n);
            AtomicInteger errors = new AtomicInteger();
            for (int i = 0; i < n; i++) {
                engine.await(timeline.at(1 + i % 1000), Duration.ofSeconds(60))
                        .subscribe(v -> { }, e -> errors.incrementAndGet(), done::countDown);
            }
            assertThat(engine.pendingWaits()).isEqualTo(n);
            assertThat(timeline.pendingWaits()).isEqualTo(n);
            long threadsWhilePending = EngineThreadsProbe.threadsOf(engine);
            for (int v = 1; v <= 1000; v++) {
                timeline.signal(v);
            }
            assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
            assertThat(errors).hasValue(0);
            assertThat(engine.pendingWaits()).isZero();
            assertThat(threadsWhilePending).isLessThanOrEqualTo(4);
            assertThat(EngineThreadsProbe.threadsOf(engine)).isLessThanOrEqualTo(4);
        } finally {
            engine.dispose();
        }
    }

    @Test
    void aMillionSubscribeCancelCyclesLeaveNoRegistrationAndNoExtraThread() {
        SyncEngine engine = GpuSync.builder().name("cycles").build();
        try {
            CpuTimeline timeline = new CpuTimeline();
            SyncPoint point = timeline.at(1);
            int threadsBefore = Thread.activeCount();
            for (int i = 0; i < 1_000_000; i++) {
                Disposable d = engine.await(point, Duration.ofSeconds(30)).subscribe();
                d.dispose();
            }
            assertThat(engine.pendingWaits()).isZero();
            assertThat(timeline.pendingWaits()).isZero();
            assertThat(EngineThreadsProbe.waitingThreadsOf(engine)).isZero();
            // the engine's timer thread, and Reactor's at most
            assertThat(Thread.activeCount()).isLessThanOrEqualTo(threadsBefore + 3);
        } finally {
            engine.dispose();
        }
    }

    @Test
    void tenThousandPendingWaitsAtDisposeAllEndWithSyncCancelledAndThreadsReturnToBaseline() throws Exception {
        int baseline = Thread.activeCount();
        SyncEngine engine = GpuSync.builder().name("dispose10k").build();
        CpuTimeline timeline = new CpuTimeline();
        List<EventFd> fds = new ArrayList<>();
        int n = 10_000;
        CountDownLatch terminated = new CountDownLatch(n);
        AtomicInteger cancelled = new AtomicInteger();
        for (int i = 0; i < n; i++) {
            SyncPoint point;
            if (i % 10 == 0) { // a share on the epoll path, so event loops are running too
                EventFd fd = EventFd.create();
                fds.add(fd);
                point = fd.point();
            } else {
                point = timeline.at(1);
            }
            engine.await(point, SyncPoint.FOREVER).subscribe(v -> { }, e -> {
                if (e instanceof SyncCancelledException) {
                    cancelled.incrementAndGet();
                }
                terminated.countDown();
            }, terminated::countDown);
        }
        assertThat(engine.pendingWaits()).isEqualTo(n);
        engine.dispose();
        assertThat(terminated.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(cancelled).hasValue(n);
        assertThat(timeline.pendingWaits()).isZero();
        assertThat(EngineThreadsProbe.threadsOf(engine)).isZero();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (Thread.activeCount() > baseline + 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(Thread.activeCount()).isLessThanOrEqualTo(baseline + 2);
        fds.forEach(EventFd::close);
    }
}
