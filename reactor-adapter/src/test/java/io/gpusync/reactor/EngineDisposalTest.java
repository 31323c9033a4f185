package io.gpusync.reactor;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SyncEngine#disposeGracefully()}: lazy, idempotent, completes only once every thread of the engine has
 * ended, and disposes nothing of the shared default engine; {@link SyncEngine#dispose()} on a thread that may block
 * still waits for those threads. (That neither blocks a non-blocking thread is {@link EngineBlockHoundTest}'s.)
 */
class EngineDisposalTest {

    /** Waits of every path that start every kind of engine thread, pending until the engine is disposed. */
    private static List<Mono<Void>> pendingWaitsOfEveryPath(SyncEngine engine, CpuTimeline timeline, EventFd fd) {
        HostWaiters.HostWaitSet set = new HostWaiters.HostWaitSet();
        SyncPoint never = timeline.at(1);
        List<SyncWaiter> waiters = List.of(never.waiter(), HostWaiters.driverCallback(never),
                HostWaiters.probeOnly(never), HostWaiters.member(set, never), HostWaiters.blockingOnly(never),
                HostWaiters.wakeableBlocking(never), fd.point().waiter());
        List<Mono<Void>> waits = new ArrayList<>();
        for (SyncWaiter w : waiters) {
            waits.add(engine.await(w, Duration.ofSeconds(30)));
        }
        return waits;
    }

    @Test
    void disposeGracefullyEndsPendingWaitsAndCompletesOnceNoThreadOfTheEngineIsLeft() {
        for (SyncEngine engine : List.of(GpuSync.builder().name("graceful-netty").build(),
                GpuSync.builder().name("graceful-jdk").jdkLoops().build())) {
            CpuTimeline timeline = new CpuTimeline();
            try (EventFd fd = EventFd.create()) {
                CpuTimeline handedOff = new CpuTimeline(); // a completion handed to the engine's loop starts it
                StepVerifier.create(engine.await(HostWaiters.driverCallback(handedOff.at(1)), Duration.ofSeconds(5)))
                        .then(() -> handedOff.signal(1))
                        .expectComplete()
                        .verify(Duration.ofSeconds(5));
                List<StepVerifier> cancelled = new ArrayList<>();
                for (Mono<Void> wait : pendingWaitsOfEveryPath(engine, timeline, fd)) {
                    cancelled.add(StepVerifier.create(wait).expectError(SyncCancelledException.class).verifyLater());
                }
                long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                while (EngineThreadsProbe.threadsOf(engine) < 4 && System.nanoTime() < deadline) {
                    Thread.onSpinWait(); // the loop, a poller, a wait-set and a waiter thread start
                }
                assertThat(EngineThreadsProbe.threadsOf(engine)).isGreaterThanOrEqualTo(4);

                StepVerifier.create(engine.disposeGracefully()).expectComplete().verify(Duration.ofSeconds(10));

                assertThat(EngineThreadsProbe.threadsOf(engine)).as(engine.name()).isZero(); // at once: no polling
                cancelled.forEach(v -> v.verify(Duration.ofSeconds(1)));
            } finally {
                engine.dispose();
            }
        }
    }

    @Test
    void disposeGracefullyIsLazyAndEverySubscriptionCompletesBeforeOrAfterTheEngineWasDisposed() {
        SyncEngine engine = GpuSync.builder().name("graceful-lazy").build();
        try {
            StepVerifier.create(engine.await(SyncPoint.CPU, Duration.ZERO)).verifyComplete(); // starts nothing
            Mono<Void> graceful = engine.disposeGracefully();
            assertThat(engine.isDisposed()).as("disposed at assembly").isFalse();

            StepVerifier.create(graceful).expectComplete().verify(Duration.ofSeconds(10));
            assertThat(engine.isDisposed()).isTrue();
            StepVerifier.create(graceful).expectComplete().verify(Duration.ofSeconds(1));
            StepVerifier.create(engine.disposeGracefully()).expectComplete().verify(Duration.ofSeconds(1));
            engine.dispose(); // after disposeGracefully: a no-op
        } finally {
            engine.dispose();
        }
        SyncEngine disposedFirst = GpuSync.builder().name("graceful-after-dispose").build();
        StepVerifier.create(disposedFirst.await(new CpuTimeline().at(1), Duration.ofMillis(1)))
                .expectError().verify(Duration.ofSeconds(5));
        disposedFirst.dispose();
        StepVerifier.create(disposedFirst.disposeGracefully()).expectComplete().verify(Duration.ofSeconds(10));
        assertThat(EngineThreadsProbe.threadsOf(disposedFirst)).isZero();
    }

    @Test
    void theSharedEnginesDisposeGracefullyCompletesAtOnceAndDisposesNothing() {
        SyncEngine shared = GpuSync.defaultEngine();
        StepVerifier.create(shared.disposeGracefully()).expectComplete().verify(Duration.ofSeconds(1));
        assertThat(shared.isDisposed()).isFalse();
        CpuTimeline timeline = new CpuTimeline();
        StepVerifier.create(shared.await(HostWaiters.probeOnly(timeline.at(1)), Duration.ofSeconds(5)))
                .then(() -> timeline.signal(1))
                .expectComplete()
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void disposeOnAThreadThatMayBlockReturnsOnceNoThreadOfTheEngineIsLeft() {
        SyncEngine engine = GpuSync.builder().name("dispose-blocking").build();
        CpuTimeline timeline = new CpuTimeline();
        try (EventFd fd = EventFd.create()) {
            for (Mono<Void> wait : pendingWaitsOfEveryPath(engine, timeline, fd)) {
                wait.subscribe(null, e -> { });
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (EngineThreadsProbe.threadsOf(engine) < 4 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(EngineThreadsProbe.threadsOf(engine)).isGreaterThanOrEqualTo(4);
            engine.dispose();
            assertThat(engine.pendingWaits()).isZero();
            assertThat(EngineThreadsProbe.threadsOf(engine)).isZero();
        } finally {
            engine.dispose();
        }
    }
}
