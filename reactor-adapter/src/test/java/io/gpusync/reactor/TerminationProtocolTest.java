package io.gpusync.reactor;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import io.gpusync.spi.WaitSet;
import io.gpusync.spi.WaitSetMember;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * Every wait ends exactly once and always: whatever a subscriber, a release, {@code deliverOn} or the user's
 * event loops throw, the outcome reaches the subscriber, other waits are unharmed, and no exception escapes
 * into the thread that signalled, an event loop or a driver thread.
 */
class TerminationProtocolTest {

    @Test
    void aSubscriberThatThrowsHarmsNoOtherWaitAndNeverReachesTheSignallingThread() {
        SyncEngine engine = GpuSync.builder().name("throwing-subscriber").build();
        try (DroppedErrors hooks = new DroppedErrors()) {
            CpuTimeline timeline = new CpuTimeline();
            ThrowingSubscriber throwing = new ThrowingSubscriber();
            engine.await(timeline.at(1), Duration.ofSeconds(5)).subscribe(throwing);
            StepVerifier.create(engine.await(timeline.at(1), Duration.ofSeconds(5)))
                    .then(() -> assertThatCode(() -> timeline.signal(1)).doesNotThrowAnyException())
                    .verifyComplete();
            assertThat(throwing.terminated).isTrue();
            assertThat(hooks.dropped).singleElement()
                    .satisfies(d -> assertThat(d.error()).hasMessage("subscriber threw from onComplete"));
            assertThat(engine.pendingWaits()).isZero();
        } finally {
            engine.dispose();
        }
    }

    @Test
    void aSubscriberThatThrowsOnTheEpollPathHasItsExceptionDroppedNotThrownIntoTheEventLoop() throws Exception {
        SyncEngine engine = GpuSync.builder().name("throwing-epoll").build();
        try (DroppedErrors hooks = new DroppedErrors(); EventFd fd = EventFd.create(); EventFd other = EventFd.create()) {
            assertThat(engine.pathFor(fd.point().waiter())).isEqualTo(WaitPath.EPOLL);
            engine.await(fd.point(), Duration.ofSeconds(5)).subscribe(new ThrowingSubscriber());
            fd.signal();
            awaitTrue(() -> !hooks.dropped.isEmpty());
            assertThat(hooks.dropped).singleElement().satisfies(d -> {
                assertThat(d.error()).hasMessage("subscriber threw from onComplete");
                assertThat(d.thread()).startsWith("gpusync-throwing-epoll-loop-");
            });
            StepVerifier.create(engine.await(other.point(), Duration.ofSeconds(5)))
                    .then(other::signal)
                    .verifyComplete();
        } finally {
            engine.dispose();
        }
    }

    @Test
    void aDeliverOnSchedulerThatRejectsLosesNoWaitAndNeverThrowsIntoTheSignaller() throws Exception {
        Scheduler tiny = Schedulers.newBoundedElastic(1, 1, "tiny-deliver");
        SyncEngine engine = GpuSync.builder().name("rejecting-deliver").deliverOn(tiny).build();
        try {
            CpuTimeline timeline = new CpuTimeline();
            CountDownLatch completed = new CountDownLatch(100);
            for (int i = 0; i < 100; i++) {
                engine.await(timeline.at(1), Duration.ofSeconds(30)).subscribe(null, e -> { }, completed::countDown);
            }
            assertThatCode(() -> timeline.signal(1)).doesNotThrowAnyException();
            assertThat(completed.await(10, TimeUnit.SECONDS)).as("all 100 waits completed").isTrue();

            try (EventFd fd = EventFd.create()) {
                CountDownLatch viaEpoll = new CountDownLatch(100);
                for (int i = 0; i < 100; i++) {
                    engine.await(fd.point(), Duration.ofSeconds(30)).subscribe(null, e -> { }, viaEpoll::countDown);
                }
                fd.signal();
                assertThat(viaEpoll.await(10, TimeUnit.SECONDS)).as("all 100 eventfd waits completed").isTrue();
            }

            CountDownLatch cancelled = new CountDownLatch(100);
            for (int i = 0; i < 100; i++) {
                engine.await(timeline.at(2), SyncPoint.FOREVER).subscribe(null, e -> {
                    if (e instanceof SyncCancelledException) {
                        cancelled.countDown();
                    }
                });
            }
            assertThatCode(engine::dispose).doesNotThrowAnyException();
            assertThat(engine.pendingWaits()).isZero();
            assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("all 100 waits cancelled by dispose").isTrue();
            assertThat(timeline.pendingWaits()).isZero();
        } finally {
            engine.dispose();
            tiny.dispose();
        }
    }

    @Test
    void disposeFromACompletionOnTheEnginesOwnEventLoopReturnsPromptly() {
        SyncEngine engine = GpuSync.builder().name("dispose-on-loop").build();
        try (EventFd fd = EventFd.create()) {
            assertThat(engine.pathFor(fd.point().waiter())).isEqualTo(WaitPath.EPOLL);
            StepVerifier.create(engine.await(fd.point(), Duration.ofSeconds(5)).doOnSuccess(v -> engine.dispose()))
                    .then(fd::signal)
                    .expectComplete()
                    .verify(Duration.ofSeconds(3)); // it used to wait 10 s for its own loop to stop
            assertThat(engine.isDisposed()).isTrue();
        } finally {
            engine.dispose();
        }
    }

    @Test
    void disposeFromACompletionOnAPollerThreadReturnsPromptly() {
        SyncEngine engine = GpuSync.builder().name("dispose-on-poller").build();
        CpuTimeline timeline = new CpuTimeline();
        SyncWaiter probed = HostWaiters.probeOnly(timeline.at(1));
        assertThat(engine.pathFor(probed)).isEqualTo(WaitPath.PROBE);
        StepVerifier.create(engine.await(probed, Duration.ofSeconds(5)).doOnSuccess(v -> engine.dispose()))
                .then(() -> timeline.signal(1))
                .expectComplete()
                .verify(Duration.ofSeconds(3)); // the poller used to join itself for 5 s
        assertThat(engine.isDisposed()).isTrue();
    }

    @Test
    void aDriverCallbackStillCompletesItsWaitWhenTheUsersEventLoopsHaveShutDown() {
        MultiThreadIoEventLoopGroup userLoops = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        SyncEngine engine = GpuSync.builder().name("stopped-loops").eventLoopGroup(userLoops).build();
        try {
            CpuTimeline timeline = new CpuTimeline();
            SyncWaiter driverCallback = HostWaiters.driverCallback(timeline.at(1));
            assertThat(engine.pathFor(driverCallback)).isEqualTo(WaitPath.CALLBACK);
            StepVerifier.create(engine.await(driverCallback, SyncPoint.FOREVER))
                    .then(() -> {
                        userLoops.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
                        timeline.signal(1); // the "driver" calls back; the loops refuse the hand-off
                    })
                    .expectComplete()
                    .verify(Duration.ofSeconds(5));
        } finally {
            engine.dispose();
            userLoops.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        }
    }

    @Test
    void aReleaseThatThrowsDoesNotLoseTheOutcome() {
        SyncEngine engine = GpuSync.builder().name("release-throws").build();
        try {
            ParkingWaitSet set = new ParkingWaitSet();
            CpuTimeline timeline = new CpuTimeline();
            SyncWaiter member = set.member(timeline.at(1));
            StepVerifier.create(engine.await(member, Duration.ofMillis(200)))
                    .expectSubscription()
                    .then(() -> set.wakeUpThrows.set(true)) // the device is lost: the release's wake-up throws
                    .expectError(SyncTimeoutException.class)
                    .verify(Duration.ofSeconds(5));
            assertThat(engine.pendingWaits()).isZero();
        } finally {
            engine.dispose();
        }
    }

    @Test
    void aWaitSetServerRetiresEvenWhenASubscriberThrowsFromOnError() throws Exception {
        SyncEngine engine = GpuSync.builder().name("set-retires").build();
        try (DroppedErrors hooks = new DroppedErrors()) {
            ParkingWaitSet set = new ParkingWaitSet();
            set.failNext.set(true);
            CpuTimeline timeline = new CpuTimeline();
            ThrowingSubscriber throwing = new ThrowingSubscriber();
            engine.await(set.member(timeline.at(1)), Duration.ofSeconds(5)).subscribe(throwing);
            awaitTrue(() -> throwing.terminated);
            // the set recovered; a new wait on it needs a live server
            StepVerifier.create(engine.await(set.member(timeline.at(1)), Duration.ofSeconds(5)))
                    .then(() -> timeline.signal(1))
                    .expectComplete()
                    .verify(Duration.ofSeconds(5));
            assertThat(hooks.dropped).singleElement()
                    .satisfies(d -> assertThat(d.error()).hasCauseInstanceOf(DeviceLostException.class));
        } finally {
            engine.dispose();
        }
    }

    @Test
    void awaitAllAndAwaitAnyStartTheirWaitsAtSubscriptionAndTimeOutWithoutDemand() {
        CpuTimeline timeline = new CpuTimeline();
        List<SyncPoint> points = List.of(timeline.at(1), timeline.at(2));
        StepVerifier.create(GpuSync.awaitAll(points, Duration.ofMillis(50)), 0)
                .expectSubscription()
                .then(() -> assertThat(timeline.pendingWaits()).isEqualTo(2)) // started with no request
                .expectError(SyncTimeoutException.class)
                .verify(Duration.ofSeconds(5));
        StepVerifier.create(GpuSync.awaitAny(points, Duration.ofMillis(50)), 0)
                .expectSubscription()
                .then(() -> assertThat(timeline.pendingWaits()).isEqualTo(2))
                .expectError(SyncTimeoutException.class)
                .verify(Duration.ofSeconds(5));
        CpuTimeline failed = new CpuTimeline();
        failed.fail(new DeviceLostException(BackendKind.CPU, "lost"));
        StepVerifier.create(GpuSync.awaitAll(List.of(failed.at(1), timeline.at(3)), SyncPoint.FOREVER), 0)
                .expectError(DeviceLostException.class)
                .verify(Duration.ofSeconds(5));
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void aBlockingWaitersFirstProbeRunsOnTheWaiterPoolNeverOnTheSubscribingThread() throws Exception {
        SyncEngine engine = GpuSync.builder().name("first-probe").build();
        MultiThreadIoEventLoopGroup nettyLoops = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        try {
            CpuTimeline timeline = new CpuTimeline();
            Queue<String> threads = new ConcurrentLinkedQueue<>();
            SyncWaiter pending = HostWaiters.recordingBlocking(timeline.at(1), threads);
            assertThat(engine.pathFor(pending)).isEqualTo(WaitPath.BLOCKING);
            // subscribed from a Reactor parallel thread
            StepVerifier.create(Mono.defer(() -> engine.await(pending, Duration.ofSeconds(5)))
                            .subscribeOn(Schedulers.parallel()))
                    .then(() -> timeline.signal(1))
                    .verifyComplete();
            // subscribed from a Netty event loop, the point already signalled, and a Duration.ZERO probe
            CountDownLatch done = new CountDownLatch(2);
            AtomicInteger completions = new AtomicInteger();
            nettyLoops.next().execute(() -> {
                engine.await(pending, Duration.ofSeconds(5)).subscribe(null, e -> done.countDown(), () -> {
                    completions.incrementAndGet();
                    done.countDown();
                });
                engine.await(pending, Duration.ZERO).subscribe(null, e -> done.countDown(), () -> {
                    completions.incrementAndGet();
                    done.countDown();
                });
            });
            assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(completions).hasValue(2);
            assertThat(threads).isNotEmpty().allSatisfy(t -> assertThat(t).startsWith("gpusync-first-probe-waiter-"));
            // an unsignalled point probed with Duration.ZERO times out after its one probe
            StepVerifier.create(engine.await(HostWaiters.recordingBlocking(timeline.at(9), threads), Duration.ZERO))
                    .expectError(SyncTimeoutException.class)
                    .verify(Duration.ofSeconds(5));
        } finally {
            engine.dispose();
            nettyLoops.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        }
    }

    @Test
    void aNonPositiveRequestFailsTheWaitAndFreesIt() {
        CpuTimeline timeline = new CpuTimeline();
        for (Mono<Void> wait : List.of(GpuSync.await(timeline.at(1), SyncPoint.FOREVER),
                GpuSync.awaitAll(List.of(timeline.at(1), timeline.at(2)), SyncPoint.FOREVER),
                GpuSync.awaitAny(List.of(timeline.at(1), timeline.at(2)), SyncPoint.FOREVER))) {
            java.util.concurrent.CompletableFuture<Throwable> error = new java.util.concurrent.CompletableFuture<>();
            wait.subscribe(new reactor.core.publisher.BaseSubscriber<Void>() {
                @Override
                protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                    s.request(0);
                }

                @Override
                protected void hookOnError(Throwable e) {
                    error.complete(e);
                }
            });
            assertThat(error).as(wait.toString()).succeedsWithin(Duration.ofSeconds(5)).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(timeline.pendingWaits()).isZero();
    }

    private static void awaitTrue(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(condition.getAsBoolean()).as("condition met within 5 s").isTrue();
    }

    record SetMember(WaitSet waitSet, SyncWaiter inner) implements WaitSetMember {
        @Override
        public void await(Duration timeout) {
            inner.await(timeout);
        }

        @Override
        public boolean isSignaled() {
            return inner.isSignaled();
        }

        @Override
        public BackendKind backend() {
            return BackendKind.VULKAN;
        }
    }

    /**
     * A wait set over host timelines whose wait-any parks for the slice (the server then probes); it can be
     * told to fail its next wait-any with members (a device lost, then recovered) or to throw from {@code wakeUp}.
     */
    static final class ParkingWaitSet implements WaitSet {
        final AtomicBoolean failNext = new AtomicBoolean();
        final AtomicBoolean wakeUpThrows = new AtomicBoolean();
        private volatile Thread blocked;

        SyncWaiter member(SyncPoint point) {
            return new SetMember(this, point.waiter());
        }

        @Override
        public void awaitAny(List<? extends WaitSetMember> members, Duration slice) {
            if (!members.isEmpty() && failNext.getAndSet(false)) { // fails while serving a wait
                throw new DeviceLostException(BackendKind.VULKAN, "device lost");
            }
            blocked = Thread.currentThread();
            LockSupport.parkNanos(this, slice.toNanos());
            blocked = null;
        }

        @Override
        public void wakeUp() {
            if (wakeUpThrows.get()) {
                throw new DeviceLostException(BackendKind.VULKAN, "device lost while waking the set");
            }
            Thread t = blocked;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }
}
