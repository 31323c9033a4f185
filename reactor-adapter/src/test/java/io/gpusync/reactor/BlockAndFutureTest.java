package io.gpusync.reactor;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SyncEngine#block} and {@link SyncEngine#future}: the {@code Mono}'s outcomes as a return, a throw or a
 * future, on every {@link WaitPath}; interrupts and cancels free the wait before anyone hears of it.
 */
class BlockAndFutureTest {
    private static SyncEngine engine;
    private static final HostWaiters.HostWaitSet WAIT_SET = new HostWaiters.HostWaitSet();

    @BeforeAll
    static void start() {
        engine = GpuSync.builder().name("caller").build();
    }

    @AfterAll
    static void stop() {
        engine.dispose();
    }

    /** A point the test signals, whose waiter takes {@code path}; {@code timeline} counts callback registrations. */
    private record Subject(SyncPoint point, Runnable signal, CpuTimeline timeline, AutoCloseable resource) {
        static Subject of(WaitPath path) {
            if (path == WaitPath.EPOLL) {
                EventFd fd = EventFd.create();
                return new Subject(fd.point(), fd::signal, null, fd);
            }
            CpuTimeline timeline = new CpuTimeline();
            SyncPoint point = timeline.at(1);
            SyncWaiter waiter = switch (path) {
                case CALLBACK -> point.waiter();
                case WAIT_SET -> HostWaiters.member(WAIT_SET, point);
                case BLOCKING -> HostWaiters.wakeableBlocking(point);
                case PROBE -> HostWaiters.probeOnly(point);
                case SPIN_THEN_CALLBACK -> HostWaiters.cheapProbeWithCallback(point);
                default -> throw new IllegalArgumentException(path.name());
            };
            return new Subject(new SyncPoint.HostTimeline(timeline, 1, waiter), () -> timeline.signal(1), timeline,
                    () -> { });
        }
    }

    private static void awaitPending(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (engine.pendingWaits() != n && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(engine.pendingWaits()).isEqualTo(n);
    }

    @ParameterizedTest
    @EnumSource(value = WaitPath.class, names = "IMMEDIATE", mode = EnumSource.Mode.EXCLUDE)
    void blockReturnsOnceThePointIsSignalledOnVirtualAndPlatformThreads(WaitPath path) throws Exception {
        for (boolean virtual : new boolean[] {true, false}) {
            Subject s = Subject.of(path);
            assertThat(engine.pathFor(s.point().waiter())).isEqualTo(path);
            AtomicReference<Throwable> outcome = new AtomicReference<>();
            AtomicInteger returned = new AtomicInteger();
            Thread t = (virtual ? Thread.ofVirtual() : Thread.ofPlatform()).start(() -> {
                try {
                    engine.block(s.point(), Duration.ofSeconds(30));
                    returned.incrementAndGet();
                } catch (Throwable e) {
                    outcome.set(e);
                }
            });
            awaitPending(1);
            assertThat(t.isAlive()).isTrue();
            s.signal().run();
            assertThat(t.join(Duration.ofSeconds(10))).isTrue();
            assertThat(outcome.get()).isNull();
            assertThat(returned).hasValue(1);
            assertThat(engine.pendingWaits()).isZero();
            s.resource().close();
        }
    }

    @ParameterizedTest
    @EnumSource(value = WaitPath.class, names = "IMMEDIATE", mode = EnumSource.Mode.EXCLUDE)
    void blockThrowsSyncTimeoutExceptionNoEarlierThanTheTimeout(WaitPath path) throws Exception {
        Subject s = Subject.of(path);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Long> tookNanos = new AtomicReference<>();
        Thread.ofVirtual().start(() -> {
            long t0 = System.nanoTime();
            try {
                engine.block(s.point(), Duration.ofMillis(50));
            } catch (Throwable e) {
                tookNanos.set(System.nanoTime() - t0);
                thrown.set(e);
            }
        }).join();
        assertThat(thrown.get()).isInstanceOf(SyncTimeoutException.class);
        assertThat(tookNanos.get()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(50));
        assertThat(engine.pendingWaits()).isZero();
        s.resource().close();
    }

    @Test
    void blockAndFutureReportTheWaitersOwnErrorOnADriverFailure() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        DeviceLostException lost = new DeviceLostException(BackendKind.VULKAN, "VK_ERROR_DEVICE_LOST");
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = Thread.ofVirtual().start(() -> {
            try {
                engine.block(timeline.at(1), Duration.ofSeconds(30));
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        CompletableFuture<Void> future = engine.future(timeline.at(1), Duration.ofSeconds(30));
        awaitPending(2);
        timeline.fail(lost);
        t.join();
        assertThat(thrown.get()).isSameAs(lost);
        assertThatThrownBy(() -> future.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isSameAs(lost);
        // a point that has failed before the call fails at once, on the calling thread's wait
        assertThatThrownBy(() -> engine.block(timeline.at(2), Duration.ofSeconds(30))).isSameAs(lost);
    }

    @Test
    void badArgumentsAndADisposedEngineFailAsTheMonoDoes() throws Exception {
        SyncPoint point = new CpuTimeline().at(1);
        assertThatThrownBy(() -> engine.block(null, Duration.ZERO)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> engine.future(point, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> engine.block(point, Duration.ofMillis(-1)))
                .isInstanceOf(SyncInvalidArgumentException.class);
        assertThat(engine.future(point, Duration.ofMillis(-1))).failsWithin(Duration.ZERO)
                .withThrowableOfType(ExecutionException.class).havingCause()
                .isInstanceOf(SyncInvalidArgumentException.class);
        assertThatThrownBy(() -> engine.block(point, Duration.ZERO)).isInstanceOf(SyncTimeoutException.class);

        SyncEngine disposed = GpuSync.builder().name("caller-disposed").build();
        disposed.dispose();
        AtomicReference<Throwable> onVirtual = new AtomicReference<>();
        Thread.ofVirtual().start(() -> {
            try {
                disposed.block(point, Duration.ofSeconds(1));
            } catch (Throwable e) {
                onVirtual.set(e);
            }
        }).join();
        assertThat(onVirtual.get()).isInstanceOf(SyncCancelledException.class);
        assertThatThrownBy(() -> disposed.block(point, Duration.ofSeconds(1)))
                .isInstanceOf(SyncCancelledException.class);
        assertThat(disposed.future(point, Duration.ofSeconds(1))).failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(ExecutionException.class).havingCause()
                .isInstanceOf(SyncCancelledException.class);
    }

    @Test
    void blockRefusesAThreadThatMustNotBlock() {
        SyncPoint point = new CpuTimeline().at(1);
        CompletableFuture<Throwable> onParallel = new CompletableFuture<>();
        reactor.core.scheduler.Schedulers.parallel().schedule(() -> {
            try {
                engine.block(point, Duration.ofSeconds(1));
                onParallel.complete(null);
            } catch (Throwable e) {
                onParallel.complete(e);
            }
        });
        assertThat(onParallel.join()).isInstanceOf(IllegalStateException.class);
        assertThat(engine.pendingWaits()).isZero();
    }

    /**
     * The structural proof of "freed at once": when {@code block} throws on an interrupt, the engine no longer
     * holds the wait, and a callback's registration is gone from the timeline — every path. The time from the
     * interrupt to the throw is printed (figures, not asserted: the box is shared).
     */
    @ParameterizedTest
    @EnumSource(value = WaitPath.class, names = "IMMEDIATE", mode = EnumSource.Mode.EXCLUDE)
    void anInterruptedVirtualThreadFreesItsWaitBeforeBlockThrowsAndKeepsItsFlag(WaitPath path) throws Exception {
        int rounds = 200;
        long[] nanos = new long[rounds];
        for (int i = 0; i < rounds; i++) {
            Subject s = Subject.of(path);
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicInteger pendingAtThrow = new AtomicInteger(-1);
            AtomicInteger registeredAtThrow = new AtomicInteger(-1);
            AtomicReference<Boolean> flagKept = new AtomicReference<>();
            AtomicReference<Long> interruptedAt = new AtomicReference<>();
            AtomicReference<Long> thrownAt = new AtomicReference<>();
            Thread t = Thread.ofVirtual().start(() -> {
                try {
                    engine.block(s.point(), Duration.ofMinutes(1));
                } catch (Throwable e) {
                    thrownAt.set(System.nanoTime());
                    pendingAtThrow.set(engine.pendingWaits());
                    registeredAtThrow.set(s.timeline() == null ? 0 : s.timeline().pendingWaits());
                    flagKept.set(Thread.currentThread().isInterrupted());
                    thrown.set(e);
                }
            });
            awaitPending(1);
            while (t.getState() != Thread.State.WAITING) { // parked in block
                Thread.onSpinWait();
            }
            interruptedAt.set(System.nanoTime());
            t.interrupt();
            assertThat(t.join(Duration.ofSeconds(10))).isTrue();
            assertThat(thrown.get()).isInstanceOf(SyncCancelledException.class);
            assertThat(flagKept.get()).isTrue();
            assertThat(pendingAtThrow.get()).as("waits the engine held when block threw").isZero();
            if (path == WaitPath.CALLBACK) {
                assertThat(registeredAtThrow.get()).as("callbacks registered when block threw").isZero();
            }
            nanos[i] = thrownAt.get() - interruptedAt.get();
            s.resource().close();
        }
        Arrays.sort(nanos);
        System.out.printf("%s: interrupt → block threw, wait freed: p50 %.1f µs, p99 %.1f µs, max %.1f µs (%d rounds)%n",
                path, nanos[rounds / 2] / 1e3, nanos[rounds * 99 / 100] / 1e3, nanos[rounds - 1] / 1e3, rounds);
        assertThat(nanos[rounds / 2]).as("p50, generous on a shared box").isLessThan(TimeUnit.MILLISECONDS.toNanos(50));
    }

    /** Interrupts that race the start on the engine's loop (before, during, after it) never leave a wait behind. */
    @Test
    void anInterruptAtAnyMomentOfTheStartLeavesNothingPending() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        AtomicInteger leftBehind = new AtomicInteger();
        AtomicInteger notCancelled = new AtomicInteger();
        for (int i = 0; i < 2000; i++) {
            Thread t = Thread.ofVirtual().unstarted(() -> {
                try {
                    engine.block(timeline.at(1), Duration.ofMinutes(1));
                    notCancelled.incrementAndGet();
                } catch (SyncCancelledException expected) {
                    if (engine.pendingWaits() != 0 || timeline.pendingWaits() != 0) {
                        leftBehind.incrementAndGet();
                    }
                }
            });
            t.start();
            LockSupport.parkNanos(i % 50 * 1_000L); // 0–49 µs: the interrupt lands anywhere in the start
            t.interrupt();
            t.join();
        }
        assertThat(leftBehind).hasValue(0);
        assertThat(notCancelled).hasValue(0);
        assertThat(engine.pendingWaits()).isZero();
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void anInterruptedThreadThrowsAtOnceWithoutStartingAWait() {
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> engine.block(new CpuTimeline().at(1), Duration.ofMinutes(1)))
                    .isInstanceOf(SyncCancelledException.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(engine.pendingWaits()).isZero();
    }

    /**
     * {@code future}'s completion runs where the {@code Mono}'s subscriber is signalled: for a driver callback, the
     * engine's loop that took the hand-off — never the signalling (driver) thread.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aFutureCompletesOnTheEnginesHandOffNeverOnTheDriversThread(boolean createdOnAVirtualThread)
            throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        SyncPoint point = new SyncPoint.HostTimeline(timeline, 1, HostWaiters.driverCallback(timeline.at(1)));
        assertThat(engine.pathFor(point.waiter())).isEqualTo(WaitPath.CALLBACK);
        AtomicReference<CompletableFuture<Void>> made = new AtomicReference<>();
        if (createdOnAVirtualThread) {
            Thread.ofVirtual().start(() -> made.set(engine.future(point, Duration.ofSeconds(30)))).join();
        } else {
            made.set(engine.future(point, Duration.ofSeconds(30)));
        }
        AtomicReference<String> completedOn = new AtomicReference<>();
        CompletableFuture<Void> seen = made.get().thenRun(() -> completedOn.set(Thread.currentThread().getName()));
        AtomicReference<String> monoSignalledOn = new AtomicReference<>();
        CompletableFuture<Void> mono = new CompletableFuture<>();
        engine.await(point, Duration.ofSeconds(30)).subscribe(null, mono::completeExceptionally, () -> {
            monoSignalledOn.set(Thread.currentThread().getName());
            mono.complete(null);
        });
        awaitPending(2);
        Thread driver = Thread.ofPlatform().name("driver-signal").start(() -> timeline.signal(1));
        driver.join();
        seen.get(10, TimeUnit.SECONDS);
        mono.get(10, TimeUnit.SECONDS);
        assertThat(completedOn.get()).startsWith("gpusync-caller-loop-").isNotEqualTo("driver-signal");
        assertThat(monoSignalledOn.get()).startsWith("gpusync-caller-loop-");
    }

    /** Cancelling the future frees the wait in place: the callback is deregistered when {@code cancel} returns. */
    @ParameterizedTest
    @EnumSource(value = WaitPath.class, names = "IMMEDIATE", mode = EnumSource.Mode.EXCLUDE)
    void cancellingAFutureFreesItsWaitAtOnce(WaitPath path) throws Exception {
        Subject s = Subject.of(path);
        CompletableFuture<Void> future = engine.future(s.point(), Duration.ofMinutes(1));
        awaitPending(1);
        if (path == WaitPath.CALLBACK) {
            assertThat(s.timeline().pendingWaits()).isEqualTo(1);
        }
        assertThat(future.cancel(true)).isTrue();
        assertThat(engine.pendingWaits()).isZero();
        if (path == WaitPath.CALLBACK) {
            assertThat(s.timeline().pendingWaits()).as("the native (callback) registration").isZero();
        }
        assertThat(future).isCancelled();
        s.resource().close();
    }

    @Test
    void aFutureCancelledWhileItsStartIsOnTheEnginesLoopIsFreedThere() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        for (int i = 0; i < 1000; i++) {
            Thread.ofVirtual().start(() -> engine.future(timeline.at(1), Duration.ofMinutes(1)).cancel(true)).join();
        }
        awaitPending(0);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (timeline.pendingWaits() != 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void aFutureFailsWithSyncTimeoutExceptionAndOrTimeoutFreesItsWait() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        assertThat(engine.future(timeline.at(1), Duration.ofMillis(30))).failsWithin(Duration.ofSeconds(10))
                .withThrowableOfType(ExecutionException.class).havingCause()
                .isInstanceOf(SyncTimeoutException.class);
        CompletableFuture<Void> f = engine.future(timeline.at(1), Duration.ofMinutes(1));
        awaitPending(1);
        f.orTimeout(10, TimeUnit.MILLISECONDS);
        assertThat(f).failsWithin(Duration.ofSeconds(10));
        awaitPending(0);
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void anAlreadySignalledPointCompletesTheFutureBeforeItIsReturned() {
        CpuTimeline timeline = new CpuTimeline(5);
        assertThat(engine.future(timeline.at(3), Duration.ofSeconds(1))).isCompleted();
        engine.block(timeline.at(3), Duration.ZERO);
    }
}
