package io.gpusync.reactor;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A BLOCKING-path wait whose waiter is a {@link io.gpusync.spi.WakeableWaiter} frees its pool thread as soon
 * as it ends without a signal — cancelled, timed out, or the engine disposed — instead of at the end of the
 * native slice; a waiter that is not wakeable keeps its thread until the slice ends (the documented bound).
 *
 * <p>The engines here wait in 10 s slices: a thread freed within 2 s was woken, not released by its slice.
 * A thread is "in the native wait" while its registration sits in the host timeline
 * ({@link CpuTimeline#pendingWaits()}) and its stack is inside the waiter's {@code await}.
 */
class WakeableBlockingWaitsTest {
    private static final Duration LONG_SLICE = Duration.ofSeconds(10);
    private static final Duration FREED_WITHIN = Duration.ofSeconds(2);

    private SyncEngine engine;
    private CpuTimeline timeline;

    @BeforeEach
    void start() {
        engine = GpuSync.builder().name("wake").blockingSlice(LONG_SLICE).build();
        timeline = new CpuTimeline();
    }

    @AfterEach
    void stop() {
        timeline.signal(Long.MAX_VALUE); // frees any thread still in a slice
        engine.dispose();
    }

    @Test
    void aCancelledWaitFreesItsPoolThreadAtOnce() {
        SyncWaiter waiter = HostWaiters.wakeableBlocking(timeline.at(1));
        assertThat(engine.pathFor(waiter)).isEqualTo(WaitPath.BLOCKING);
        Disposable wait = engine.await(waiter, Duration.ofMinutes(1)).subscribe();
        awaitTrue("the pool thread is in the native wait", this::aPoolThreadIsInTheNativeWait);

        wait.dispose();

        assertThat(engine.pendingWaits()).isZero();
        awaitTrue("the pool thread left the native wait", this::noPoolThreadIsInTheNativeWait);
        assertThat(timeline.pendingWaits()).as("the waiter's registration in the timeline").isZero();
    }

    @Test
    void aTimedOutWaitFreesItsPoolThreadAtOnce() {
        SyncWaiter waiter = HostWaiters.wakeableBlocking(timeline.at(1));

        StepVerifier.create(engine.await(waiter, Duration.ofMillis(200)))
                .expectError(SyncTimeoutException.class)
                .verify(Duration.ofSeconds(10));

        assertThat(engine.pendingWaits()).isZero();
        awaitTrue("the pool thread left the native wait", this::noPoolThreadIsInTheNativeWait);
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void disposingTheEngineFreesItsPoolThreadsAtOnce() {
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        engine.await(HostWaiters.wakeableBlocking(timeline.at(1)), Duration.ofMinutes(1))
                .subscribe(null, outcome::set);
        awaitTrue("the pool thread is in the native wait", this::aPoolThreadIsInTheNativeWait);

        long before = System.nanoTime();
        engine.dispose(); // waits (5 s at most) for the pool's threads to leave their slice

        assertThat(outcome.get()).isInstanceOf(SyncCancelledException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - before)).as("dispose").isLessThan(FREED_WITHIN);
        awaitTrue("the pool thread left the native wait", this::noPoolThreadIsInTheNativeWait);
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void aWakeDoesNotEndAWaitThatIsStillActive() {
        SyncWaiter waiter = HostWaiters.wakeableBlocking(timeline.at(1));
        StepVerifier.create(engine.await(waiter, Duration.ofMinutes(1)))
                .expectSubscription()
                .then(() -> awaitTrue("the pool thread is in the native wait", this::aPoolThreadIsInTheNativeWait))
                .then(((io.gpusync.spi.WakeableWaiter) waiter)::wakeWaiters) // a spurious end of the slice
                .then(() -> awaitTrue("the pool thread waits again", this::aPoolThreadIsInTheNativeWait))
                .then(() -> assertThat(engine.pendingWaits()).isOne())
                .then(() -> timeline.signal(1))
                .expectComplete()
                .verify(Duration.ofSeconds(10));
    }

    /** The documented bound: without a wake-up primitive the thread stays in the native wait for its slice. */
    @Test
    void aWaiterThatIsNotWakeableKeepsItsPoolThreadUntilTheSliceEnds() {
        SyncWaiter waiter = HostWaiters.blockingOnly(timeline.at(1));
        assertThat(engine.pathFor(waiter)).isEqualTo(WaitPath.BLOCKING);
        Disposable wait = engine.await(waiter, Duration.ofMinutes(1)).subscribe();
        awaitTrue("the pool thread is in the native wait", this::aPoolThreadIsInTheNativeWait);

        wait.dispose();

        assertThat(engine.pendingWaits()).isZero();
        // the slice (10 s) is far from over: the thread is still blocked in the cancelled wait
        assertThat(aPoolThreadIsInTheNativeWait()).isTrue();
        assertThat(timeline.pendingWaits()).isOne();
        timeline.signal(1); // ends the slice early: the thread finds the wait done and is free
        awaitTrue("the pool thread left the native wait", this::noPoolThreadIsInTheNativeWait);
    }

    private boolean aPoolThreadIsInTheNativeWait() {
        return timeline.pendingWaits() == 1 && poolThreadsInAwait() == 1;
    }

    private boolean noPoolThreadIsInTheNativeWait() {
        return timeline.pendingWaits() == 0 && poolThreadsInAwait() == 0;
    }

    /** Threads of this engine's waiter pool whose stack is inside a host timeline waiter's {@code await}. */
    private long poolThreadsInAwait() {
        String prefix = "gpusync-" + engine.name() + "-waiter-";
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(e -> e.getKey().getName().startsWith(prefix))
                .filter(e -> Arrays.stream(e.getValue()).anyMatch(f ->
                        f.getClassName().equals("io.gpusync.cpu.CpuTimelineWaiter") && f.getMethodName().equals("await")))
                .count();
    }

    private static void awaitTrue(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + FREED_WITHIN.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail(what + ": not within " + FREED_WITHIN);
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted");
            }
        }
    }
}
