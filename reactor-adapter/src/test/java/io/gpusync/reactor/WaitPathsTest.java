package io.gpusync.reactor;

import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/** Every path the engine can pick completes, times out and cancels. */
class WaitPathsTest {
    private static SyncEngine engine;
    private static final HostWaiters.HostWaitSet WAIT_SET = new HostWaiters.HostWaitSet();

    @BeforeAll
    static void start() {
        engine = GpuSync.builder().name("paths").build();
    }

    @AfterAll
    static void stop() {
        engine.dispose();
    }

    /** A primitive the test can signal, seen through a waiter that takes {@code path}. */
    private record Subject(SyncWaiter waiter, Runnable signal, AutoCloseable resource) {
        static Subject of(WaitPath path) {
            if (path == WaitPath.EPOLL) {
                EventFd fd = EventFd.create();
                return new Subject(fd.point().waiter(), fd::signal, fd);
            }
            CpuTimeline timeline = new CpuTimeline();
            SyncPoint point = timeline.at(1);
            SyncWaiter waiter = switch (path) {
                case CALLBACK -> point.waiter();
                case WAIT_SET -> HostWaiters.member(WAIT_SET, point);
                case BLOCKING -> HostWaiters.blockingOnly(point);
                case PROBE -> HostWaiters.probeOnly(point);
                case SPIN_THEN_CALLBACK -> HostWaiters.cheapProbeWithCallback(point);
                default -> throw new IllegalArgumentException(path.name());
            };
            return new Subject(waiter, () -> timeline.signal(1), () -> { });
        }
    }

    @ParameterizedTest
    @EnumSource(value = WaitPath.class, names = "IMMEDIATE", mode = EnumSource.Mode.EXCLUDE)
    void theEngineTakesThePathTheWaiterAdvertises(WaitPath path) {
        assertThat(engine.pathFor(Subject.of(path).waiter())).isEqualTo(path);
    }

    @ParameterizedTest
    @EnumSource(value = WaitPath.class, names = "IMMEDIATE", mode = EnumSource.Mode.EXCLUDE)
    void aWaitCompletesWhenThePointIsSignalledLater(WaitPath path) throws Exception {
        Subject s = Subject.of(path);
        try (s.resource) {
            StepVerifier.create(engine.await(s.waiter, Duration.ofSeconds(10)))
                    .expectSubscription()
                    .expectNoEvent(Duration.ofMillis(20))
                    .then(s.signal)
                    .expectComplete()
                    .verify(Duration.ofSeconds(10));
            assertThat(engine.pendingWaits()).isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(value = WaitPath.class, names = "IMMEDIATE", mode = EnumSource.Mode.EXCLUDE)
    void anAlreadySignalledPointCompletesAtOnce(WaitPath path) throws Exception {
        Subject s = Subject.of(path);
        try (s.resource) {
            s.signal.run();
            StepVerifier.create(engine.await(s.waiter, Duration.ofSeconds(10))).expectComplete()
                    .verify(Duration.ofSeconds(5));
            StepVerifier.create(engine.await(s.waiter, Duration.ZERO)).expectComplete().verify(Duration.ofSeconds(5));
        }
    }

    @ParameterizedTest
    @EnumSource(value = WaitPath.class, names = "IMMEDIATE", mode = EnumSource.Mode.EXCLUDE)
    void aWaitTimesOutWithSyncTimeoutExceptionNoEarlierThanItsTimeout(WaitPath path) throws Exception {
        Subject s = Subject.of(path);
        try (s.resource) {
            Duration timeout = Duration.ofMillis(100);
            long t0 = System.nanoTime();
            StepVerifier.create(engine.await(s.waiter, timeout))
                    .expectError(SyncTimeoutException.class)
                    .verify(Duration.ofSeconds(10));
            assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(timeout.toNanos());
            assertThat(engine.pendingWaits()).isZero();
            StepVerifier.create(engine.await(s.waiter, Duration.ZERO)).expectError(SyncTimeoutException.class)
                    .verify(Duration.ofSeconds(5));
        }
    }

    @ParameterizedTest
    @EnumSource(value = WaitPath.class, names = "IMMEDIATE", mode = EnumSource.Mode.EXCLUDE)
    void aCancelledWaitIsFreedAndNeverSignalled(WaitPath path) throws Exception {
        Subject s = Subject.of(path);
        try (s.resource) {
            AtomicBoolean delivered = new AtomicBoolean();
            Disposable d = engine.await(s.waiter, SyncPoint.FOREVER)
                    .subscribe(v -> { }, e -> delivered.set(true), () -> delivered.set(true));
            assertThat(engine.pendingWaits()).isEqualTo(1);
            d.dispose();
            assertThat(engine.pendingWaits()).isZero();
            s.signal.run();
            Thread.sleep(50);
            assertThat(delivered).isFalse();
        }
    }

    @ParameterizedTest
    @EnumSource(value = WaitPath.class, names = "IMMEDIATE", mode = EnumSource.Mode.EXCLUDE)
    void foreverWaitsUntilSignalled(WaitPath path) throws Exception {
        Subject s = Subject.of(path);
        try (s.resource) {
            StepVerifier.create(engine.await(s.waiter, SyncPoint.FOREVER))
                    .expectSubscription()
                    .expectNoEvent(Duration.ofMillis(50))
                    .then(s.signal)
                    .expectComplete()
                    .verify(Duration.ofSeconds(10));
        }
    }
}
