package io.gpusync.reactor;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class EngineSemanticsTest {

    @Test
    void theDefaultEngineWorksWithNoConfiguration() {
        CpuTimeline timeline = new CpuTimeline();
        Mono<Void> wait = GpuSync.await(timeline.at(1));
        timeline.signal(1);
        StepVerifier.create(wait).verifyComplete();
        StepVerifier.create(GpuSync.await(SyncPoint.CPU)).verifyComplete();
        StepVerifier.create(GpuSync.await(SyncPoint.NOOP, Duration.ZERO)).verifyComplete();
        GpuSync.defaultEngine().dispose(); // ignored: the shared engine lives on
        assertThat(GpuSync.defaultEngine().isDisposed()).isFalse();
    }

    @Test
    void nothingHappensBeforeSubscriptionAndEachSubscriptionIsANewWait() {
        AtomicInteger probes = new AtomicInteger();
        SyncWaiter probe = new SyncWaiter() {
            @Override
            public void await(Duration timeout) {
            }

            @Override
            public boolean isSignaled() {
                probes.incrementAndGet();
                return true;
            }

            @Override
            public BackendKind backend() {
                return BackendKind.CPU;
            }
        };
        Mono<Void> wait = GpuSync.await(probe, Duration.ofSeconds(1));
        assertThat(probes).hasValue(0);
        wait.block();
        wait.block();
        assertThat(probes).hasValue(2);
    }

    @Test
    void aNegativeTimeoutFailsTheMonoNotTheAssembly() {
        Mono<Void> wait = GpuSync.await(SyncPoint.CPU, Duration.ofMillis(-1)); // no throw: see InvalidArgumentsTest
        StepVerifier.create(wait).expectError(SyncInvalidArgumentException.class).verify(Duration.ofSeconds(5));
    }

    @Test
    void timeoutsOfCallbackWaitsFollowReactorVirtualTime() {
        CpuTimeline timeline = new CpuTimeline();
        StepVerifier.withVirtualTime(() -> GpuSync.await(timeline.at(1), Duration.ofHours(1)))
                .expectSubscription()
                .expectNoEvent(Duration.ofMinutes(59))
                .thenAwait(Duration.ofMinutes(1))
                .expectError(SyncTimeoutException.class)
                .verify(Duration.ofSeconds(5));
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void mediumTimeoutsOnTheCallbackPathFollowVirtualTimeAndCompleteWhenSignalledFirst() {
        CpuTimeline timeline = new CpuTimeline();
        StepVerifier.withVirtualTime(() -> GpuSync.await(timeline.at(1), Duration.ofHours(1)))
                .expectSubscription()
                .thenAwait(Duration.ofMinutes(30))
                .then(() -> timeline.signal(1))
                .expectComplete()
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void waiterErrorsPropagateUnchangedWithKindAndBackend() {
        CpuTimeline timeline = new CpuTimeline();
        Mono<Void> wait = GpuSync.await(timeline.at(1), Duration.ofSeconds(5));
        StepVerifier.create(wait)
                .then(() -> timeline.fail(new IllegalStateException("Xid 79")))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(DeviceLostException.class);
                    assertThat(((SyncException) e).kind()).isEqualTo(ErrorKind.FATAL);
                    assertThat(((SyncException) e).backend()).contains(BackendKind.CPU);
                })
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aWaiterThatFailsOnItsFirstProbeFailsTheMonoWithoutRetrying() {
        AtomicInteger calls = new AtomicInteger();
        SyncWaiter broken = new SyncWaiter() {
            @Override
            public void await(Duration timeout) {
                calls.incrementAndGet();
                throw new DeviceLostException(BackendKind.VULKAN, "lost");
            }

            @Override
            public boolean isSignaled() {
                calls.incrementAndGet();
                throw new DeviceLostException(BackendKind.VULKAN, "lost");
            }

            @Override
            public BackendKind backend() {
                return BackendKind.VULKAN;
            }
        };
        StepVerifier.create(GpuSync.await(broken, Duration.ofSeconds(5)))
                .expectErrorSatisfies(e -> assertThat(((SyncException) e).backend()).contains(BackendKind.VULKAN))
                .verify(Duration.ofSeconds(5));
        assertThat(calls).hasValue(1);
    }

    @Test
    void aFailingProbeOnThePollerFailsTheWaitOnce() {
        AtomicInteger calls = new AtomicInteger();
        SyncWaiter failsSecond = new SyncWaiter() {
            @Override
            public void await(Duration timeout) {
            }

            @Override
            public boolean isSignaled() {
                if (calls.incrementAndGet() == 1) {
                    return false;
                }
                throw new DeviceLostException(BackendKind.OPENCL, "lost on the poller");
            }

            @Override
            public BackendKind backend() {
                return BackendKind.OPENCL;
            }
        };
        StepVerifier.create(GpuSync.await(failsSecond, Duration.ofSeconds(5)))
                .expectError(DeviceLostException.class)
                .verify(Duration.ofSeconds(5));
        assertThat(calls).hasValue(2);
    }

    @Test
    void awaitAllCompletesWhenEveryPointHas() {
        CpuTimeline timeline = new CpuTimeline();
        List<SyncPoint> points = List.of(timeline.at(1), timeline.at(2), timeline.at(3), SyncPoint.CPU);
        StepVerifier.create(GpuSync.awaitAll(points, Duration.ofSeconds(5)))
                .then(() -> timeline.signal(2))
                .expectNoEvent(Duration.ofMillis(20))
                .then(() -> timeline.signal(3))
                .verifyComplete();
        StepVerifier.create(GpuSync.awaitAll(List.of(), Duration.ofSeconds(5))).verifyComplete();
    }

    @Test
    void awaitAllFailsWithTheFirstErrorAndFreesTheRest() {
        CpuTimeline good = new CpuTimeline();
        CpuTimeline bad = new CpuTimeline();
        SyncEngine engine = GpuSync.defaultEngine();
        StepVerifier.create(GpuSync.awaitAll(List.of(good.at(1), good.at(2), bad.at(1)), Duration.ofSeconds(5)))
                .then(() -> bad.fail(new SyncInvalidArgumentException(BackendKind.CPU, "bad kernel")))
                .expectError(SyncInvalidArgumentException.class)
                .verify(Duration.ofSeconds(5));
        assertThat(good.pendingWaits()).isZero();
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void awaitAnyCompletesWithTheFirstAndFreesTheRest() {
        CpuTimeline a = new CpuTimeline();
        CpuTimeline b = new CpuTimeline();
        StepVerifier.create(GpuSync.awaitAny(List.of(a.at(1), b.at(1)), Duration.ofSeconds(5)))
                .then(() -> b.signal(1))
                .verifyComplete();
        assertThat(a.pendingWaits()).isZero();
    }

    @Test
    void awaitAnyToleratesAFailingMemberWhileAnotherCanStillComplete() {
        CpuTimeline failing = new CpuTimeline();
        CpuTimeline ok = new CpuTimeline();
        StepVerifier.create(GpuSync.awaitAny(List.of(failing.at(1), ok.at(1)), Duration.ofSeconds(5)))
                .then(() -> failing.fail(new IllegalStateException("boom")))
                .expectNoEvent(Duration.ofMillis(20))
                .then(() -> ok.signal(1))
                .verifyComplete();
    }

    @Test
    void awaitAnyFailsWithAMembersErrorWhenAllFail() {
        CpuTimeline a = new CpuTimeline();
        StepVerifier.create(GpuSync.awaitAny(List.of(a.at(1), a.at(2)), Duration.ofMillis(50)))
                .expectError(SyncTimeoutException.class)
                .verify(Duration.ofSeconds(5));
        StepVerifier.create(GpuSync.awaitAny(List.of(), Duration.ofSeconds(1)))
                .expectError(SyncInvalidArgumentException.class)
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void monoTimeoutCancelsAndFreesTheWait() {
        CpuTimeline timeline = new CpuTimeline();
        StepVerifier.create(GpuSync.await(timeline.at(1), SyncPoint.FOREVER).timeout(Duration.ofMillis(30)))
                .expectError(java.util.concurrent.TimeoutException.class)
                .verify(Duration.ofSeconds(5));
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void deliverOnHandsCompletionsToTheGivenScheduler() {
        SyncEngine engine = GpuSync.builder().name("deliver").deliverOn(Schedulers.single()).build();
        try {
            CpuTimeline timeline = new CpuTimeline();
            String[] thread = new String[1];
            StepVerifier.create(engine.await(timeline.at(1), Duration.ofSeconds(5))
                            .doOnSuccess(v -> thread[0] = Thread.currentThread().getName()))
                    .then(() -> timeline.signal(1))
                    .verifyComplete();
            assertThat(thread[0]).startsWith("single-");
        } finally {
            engine.dispose();
        }
    }

    @Test
    void aDisposedEngineRefusesNewWaits() {
        SyncEngine engine = GpuSync.builder().name("refuses").build();
        engine.dispose();
        assertThat(engine.isDisposed()).isTrue();
        StepVerifier.create(engine.await(SyncPoint.CPU, Duration.ofSeconds(1)))
                .expectError(SyncCancelledException.class)
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aWaitSetThatFailsFailsItsWaitsAndStopsItsThreadInsteadOfSpinning() throws Exception {
        SyncEngine engine = GpuSync.builder().name("broken-set").build();
        try {
            AtomicInteger awaits = new AtomicInteger();
            SyncWaiter inBrokenSet = memberOfASetThatFailsAtOnce(awaits);
            for (int i = 0; i < 3; i++) {
                StepVerifier.create(engine.await(inBrokenSet, Duration.ofSeconds(5)))
                        .expectError(DeviceLostException.class)
                        .verify(Duration.ofSeconds(5));
            }
            Thread.sleep(100);
            assertThat(awaits.get()).isLessThanOrEqualTo(6); // a few calls, not a spinning loop
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (EngineThreadsProbe.waitingThreadsOf(engine) > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(EngineThreadsProbe.waitingThreadsOf(engine)).isZero();
        } finally {
            engine.dispose();
        }
    }

    @Test
    void aWaitThatMeetsARetiringWaitSetServerIsHandedToANewOneWithoutRecursing() throws Exception {
        // a set that fails at once makes its server retire at once, so new waits keep meeting retiring servers;
        // one that found a server still in the map after it had marked itself retired went back to the map, found
        // the same server, and so on: recursion until the retiring thread caught up (a StackOverflowError here, a
        // JVM crash once in CI with the 1 MB main-thread stack)
        SyncEngine engine = GpuSync.builder().name("retiring-set").build();
        SyncWaiter inBrokenSet = memberOfASetThatFailsAtOnce(new AtomicInteger());
        java.util.concurrent.atomic.AtomicReference<Throwable> wrong = new java.util.concurrent.atomic.AtomicReference<>();
        Thread subscriber = new Thread(null, () -> {
            for (int i = 0; i < 300 && wrong.get() == null; i++) {
                try {
                    engine.await(inBrokenSet, Duration.ofSeconds(5)).block(Duration.ofSeconds(5));
                    wrong.set(new AssertionError("completed"));
                } catch (DeviceLostException expected) {
                    // the set's failure: right
                } catch (Throwable t) {
                    wrong.set(t);
                }
            }
        }, "small-stack-subscriber", 256 * 1024); // a small stack makes the recursion visible at once
        try {
            subscriber.start();
            subscriber.join(60_000);
            assertThat(subscriber.isAlive()).isFalse();
            assertThat(wrong.get()).as("every wait fails with the set's DeviceLostException").isNull();
        } finally {
            engine.dispose();
        }
    }

    /**
     * A waiter whose wait set fails every {@code awaitAny} with {@link DeviceLostException} (a closed device),
     * counting the calls; the waiter itself is never signalled.
     */
    private static SyncWaiter memberOfASetThatFailsAtOnce(AtomicInteger awaits) {
        io.gpusync.spi.WaitSet broken = new io.gpusync.spi.WaitSet() {
            @Override
            public void awaitAny(List<? extends io.gpusync.spi.WaitSetMember> members, Duration slice) {
                awaits.incrementAndGet();
                throw new DeviceLostException(BackendKind.VULKAN, "device closed");
            }

            @Override
            public void wakeUp() {
            }
        };
        CpuTimeline never = new CpuTimeline();
        return new io.gpusync.spi.WaitSetMember() {
            @Override
            public io.gpusync.spi.WaitSet waitSet() {
                return broken;
            }

            @Override
            public void await(Duration timeout) {
                never.at(1).await(timeout);
            }

            @Override
            public boolean isSignaled() {
                return never.at(1).isSignaled();
            }

            @Override
            public BackendKind backend() {
                return BackendKind.VULKAN;
            }
        };
    }
}
