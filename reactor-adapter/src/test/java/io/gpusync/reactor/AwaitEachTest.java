package io.gpusync.reactor;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import reactor.test.subscriber.TestSubscriber;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SyncEngine#awaitEach} and {@link SyncEngine#awaitEachUnordered}: order, backpressure that reaches
 * upstream, cancellation that frees every wait, typed errors, engine disposal. Host timelines complete their
 * waits on the signalling thread (the callback path), so every assertion below holds as soon as a
 * {@code signal} returns: no test here waits on a clock.
 */
class AwaitEachTest {
    private static final Duration LONG = Duration.ofSeconds(30);
    private final SyncEngine engine = GpuSync.builder().name("await-each-test").build();

    @AfterEach
    void dispose() {
        engine.dispose();
    }

    /** Item {@code i} waits on the timeline {@code lines[i]} reaching 1. */
    private static CpuTimeline[] timelines(int n) {
        CpuTimeline[] lines = new CpuTimeline[n];
        for (int i = 0; i < n; i++) {
            lines[i] = new CpuTimeline();
        }
        return lines;
    }

    private static Function<Integer, SyncPoint> on(CpuTimeline[] lines) {
        return i -> lines[i].at(1);
    }

    @Test
    void emitsInSourceOrderAsSoonAsAnItemAndEveryEarlierOneAreSignalled() {
        CpuTimeline[] lines = timelines(5);
        TestSubscriber<Integer> out = TestSubscriber.create();
        Flux.range(0, 5).transform(engine.awaitEach(on(lines), 8, LONG)).subscribe(out);

        lines[2].signal(1);
        lines[1].signal(1);
        assertThat(out.getReceivedOnNext()).isEmpty(); // item 0 holds them back
        lines[0].signal(1);
        assertThat(out.getReceivedOnNext()).containsExactly(0, 1, 2);
        lines[4].signal(1);
        assertThat(out.getReceivedOnNext()).containsExactly(0, 1, 2);
        lines[3].signal(1);
        assertThat(out.getReceivedOnNext()).containsExactly(0, 1, 2, 3, 4);
        assertThat(out.isTerminatedComplete()).isTrue();
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void unorderedEmitsEachItemAsItsPointIsSignalled() {
        CpuTimeline[] lines = timelines(5);
        TestSubscriber<Integer> out = TestSubscriber.create();
        Flux.range(0, 5).transform(engine.awaitEachUnordered(on(lines), 8, LONG)).subscribe(out);

        for (int i : new int[] {3, 1, 4, 0}) {
            lines[i].signal(1);
        }
        assertThat(out.getReceivedOnNext()).containsExactly(3, 1, 4, 0);
        assertThat(out.isTerminated()).isFalse();
        lines[2].signal(1);
        assertThat(out.getReceivedOnNext()).containsExactly(3, 1, 4, 0, 2);
        assertThat(out.isTerminatedComplete()).isTrue();
    }

    @Test
    void upstreamNeverHasMoreThanMaxInFlightItemsOutstanding() {
        for (boolean ordered : new boolean[] {true, false}) {
            CpuTimeline queue = new CpuTimeline(); // item i is "done" when the queue reaches i + 1
            AtomicLong requestedUpstream = new AtomicLong();
            AtomicLong submitted = new AtomicLong();
            AtomicLong emitted = new AtomicLong();
            AtomicLong mostOutstanding = new AtomicLong();
            Function<Integer, SyncPoint> pointOf = i -> queue.at(i + 1);
            TestSubscriber<Integer> out = TestSubscriber.create();
            Flux.range(0, 100)
                    .doOnRequest(requestedUpstream::addAndGet)
                    .doOnNext(i -> mostOutstanding.accumulateAndGet(submitted.incrementAndGet() - emitted.get(),
                            Math::max))
                    .transform(ordered ? engine.awaitEach(pointOf, 8, LONG) : engine.awaitEachUnordered(pointOf, 8, LONG))
                    .doOnNext(i -> emitted.incrementAndGet())
                    .subscribe(out);

            assertThat(submitted).hasValue(8);
            assertThat(requestedUpstream).hasValue(8);
            assertThat(queue.pendingWaits()).isEqualTo(8);
            queue.signal(3);
            assertThat(emitted).hasValue(3);
            assertThat(submitted).hasValue(11);
            assertThat(requestedUpstream.get()).isLessThanOrEqualTo(emitted.get() + 8);
            for (int v = 4; v <= 100; v += 5) {
                queue.signal(v);
                assertThat(requestedUpstream.get()).isLessThanOrEqualTo(emitted.get() + 8);
            }
            queue.signal(100);
            assertThat(out.getReceivedOnNext()).hasSize(100);
            assertThat(out.isTerminatedComplete()).isTrue();
            assertThat(mostOutstanding.get()).isEqualTo(8);
        }
    }

    @Test
    void demandOfZeroRequestsNothingUpstreamAndDemandBoundsInFlight() {
        AtomicLong requestedUpstream = new AtomicLong();
        AtomicInteger pointsMade = new AtomicInteger();
        CpuTimeline queue = new CpuTimeline();
        TestSubscriber<Integer> out = TestSubscriber.builder().initialRequest(0).build();
        Flux.range(0, 100)
                .doOnRequest(requestedUpstream::addAndGet)
                .transform(engine.awaitEach(i -> {
                    pointsMade.incrementAndGet();
                    return queue.at(i + 1);
                }, 16, LONG))
                .subscribe(out);

        assertThat(requestedUpstream).hasValue(0);
        assertThat(pointsMade).hasValue(0);
        assertThat(engine.pendingWaits()).isZero();

        out.request(3); // less than maxInFlight: only what downstream wants is submitted
        assertThat(requestedUpstream).hasValue(3);
        assertThat(engine.pendingWaits()).isEqualTo(3);
        queue.signal(100);
        assertThat(out.getReceivedOnNext()).containsExactly(0, 1, 2);
        assertThat(requestedUpstream).hasValue(3);
        out.cancel();
    }

    @Test
    void cancellingFreesEveryWaitInFlightAtOnce() {
        for (boolean ordered : new boolean[] {true, false}) {
            CpuTimeline queue = new CpuTimeline();
            AtomicBoolean upstreamCancelled = new AtomicBoolean();
            Function<Integer, SyncPoint> pointOf = i -> queue.at(i + 1);
            TestSubscriber<Integer> out = TestSubscriber.create();
            Flux.range(0, 1_000)
                    .doOnCancel(() -> upstreamCancelled.set(true))
                    .transform(ordered ? engine.awaitEach(pointOf, 64, LONG) : engine.awaitEachUnordered(pointOf, 64, LONG))
                    .subscribe(out);
            assertThat(engine.pendingWaits()).isEqualTo(64);
            assertThat(queue.pendingWaits()).isEqualTo(64);

            out.cancel();

            assertThat(upstreamCancelled).isTrue();
            assertThat(engine.pendingWaits()).isZero();
            assertThat(queue.pendingWaits()).isZero();
            queue.signal(1_000);
            assertThat(out.getReceivedOnNext()).isEmpty();
            assertThat(out.isTerminated()).isFalse();
        }
    }

    @Test
    void takeCancelsUpstreamAndFreesTheRemainingWaits() {
        CpuTimeline queue = new CpuTimeline();
        AtomicBoolean upstreamCancelled = new AtomicBoolean();
        TestSubscriber<Integer> out = TestSubscriber.create();
        Flux.range(0, 1_000)
                .doOnCancel(() -> upstreamCancelled.set(true))
                .transform(engine.awaitEach(i -> queue.at(i + 1), 16, LONG))
                .take(5, false) // requests unbounded, so all 16 are in flight when it has its 5
                .subscribe(out);
        assertThat(engine.pendingWaits()).isEqualTo(16);

        queue.signal(10);

        assertThat(out.getReceivedOnNext()).containsExactly(0, 1, 2, 3, 4);
        assertThat(out.isTerminatedComplete()).isTrue();
        assertThat(upstreamCancelled).isTrue();
        assertThat(engine.pendingWaits()).isZero();
        assertThat(queue.pendingWaits()).isZero();
    }

    @Test
    void aFailedWaitFailsTheFluxTypedNamingTheItemsPointAndFreesTheOthers() {
        for (boolean ordered : new boolean[] {true, false}) {
            CpuTimeline[] lines = timelines(100);
            SyncPoint[] points = new SyncPoint[100];
            AtomicBoolean upstreamCancelled = new AtomicBoolean();
            TestSubscriber<Integer> out = TestSubscriber.create();
            Function<Integer, SyncPoint> pointOf = i -> points[i] = lines[i].at(1);
            Flux.range(0, 100)
                    .doOnCancel(() -> upstreamCancelled.set(true))
                    .transform(ordered ? engine.awaitEach(pointOf, 6, LONG) : engine.awaitEachUnordered(pointOf, 6, LONG))
                    .subscribe(out);
            lines[1].signal(1);

            lines[4].fail(new DeviceLostException(BackendKind.CPU, "device 4 lost"));

            assertThat(out.getTerminalSignal().getThrowable())
                    .isInstanceOf(DeviceLostException.class)
                    .hasMessageContaining("item 4")
                    .hasMessageContaining(points[4].toString())
                    .hasMessageContaining("device 4 lost");
            assertThat(upstreamCancelled).isTrue();
            assertThat(engine.pendingWaits()).isZero();
            for (CpuTimeline line : lines) {
                assertThat(line.pendingWaits()).isZero();
            }
        }
    }

    @Test
    void aTimedOutWaitFailsWithSyncTimeoutExceptionNamingThePoint() {
        CpuTimeline queue = new CpuTimeline();
        StepVerifier.withVirtualTime(() -> Flux.range(0, 3)
                        .transform(engine.awaitEach(i -> queue.at(i + 1), 4, Duration.ofSeconds(5))))
                .expectSubscription()
                .then(() -> queue.signal(1))
                .expectNext(0)
                .expectNoEvent(Duration.ofSeconds(4))
                .thenAwait(Duration.ofSeconds(1))
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOf(SyncTimeoutException.class)
                        .hasMessageContaining("item 1")
                        .hasMessageContaining("HostTimeline"))
                .verify(Duration.ofSeconds(10));
        assertThat(engine.pendingWaits()).isZero();
        assertThat(queue.pendingWaits()).isZero();
    }

    @Test
    void disposingTheEngineFailsPipelinesWithSyncCancelledException() {
        SyncEngine own = GpuSync.builder().name("await-each-disposed").build();
        CpuTimeline queue = new CpuTimeline();
        TestSubscriber<Integer> out = TestSubscriber.create();
        Flux.range(0, 100).transform(own.awaitEach(i -> queue.at(i + 1), 8, LONG)).subscribe(out);
        TestSubscriber<Integer> unordered = TestSubscriber.create();
        Flux.range(0, 100).transform(own.awaitEachUnordered(i -> queue.at(i + 1), 8, LONG)).subscribe(unordered);
        assertThat(own.pendingWaits()).isEqualTo(16);

        own.dispose();

        assertThat(out.getTerminalSignal().getThrowable()).isInstanceOf(SyncCancelledException.class);
        assertThat(unordered.getTerminalSignal().getThrowable()).isInstanceOf(SyncCancelledException.class);
        assertThat(queue.pendingWaits()).isZero();
        StepVerifier.create(Flux.just(1).transform(own.awaitEach(i -> queue.at(1), 1, LONG)))
                .verifyError(SyncCancelledException.class);
    }

    @Test
    void maxInFlightOutsideItsBoundsIsRefusedAtAssembly() {
        assertThatThrownBy(() -> engine.awaitEach(i -> SyncPoint.CPU, 0, LONG))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxInFlight");
        assertThatThrownBy(() -> GpuSync.awaitEachUnordered(i -> SyncPoint.CPU, -1, LONG))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxInFlight");
        assertThatThrownBy(() -> engine.awaitEach(i -> SyncPoint.CPU, SyncEngine.MAX_IN_FLIGHT + 1, LONG))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxInFlight");
        assertThat(engine.awaitEach(i -> SyncPoint.CPU, SyncEngine.MAX_IN_FLIGHT, LONG)).isNotNull();
    }

    @Test
    void aNegativeTimeoutFailsEachSubscriptionThroughOnError() {
        Function<Flux<Integer>, Flux<Integer>> stage = engine.awaitEach(i -> SyncPoint.CPU, 1, Duration.ofSeconds(-1)); // no throw at assembly
        StepVerifier.create(Flux.just(1).transform(stage)).verifyError(SyncInvalidArgumentException.class);
        StepVerifier.create(Flux.just(1).transform(GpuSync.<Integer>awaitEachUnordered(i -> SyncPoint.CPU, 1, Duration.ofSeconds(-1))))
                .verifyError(SyncInvalidArgumentException.class);
    }

    @Test
    void anErrorOfPointOfFailsTheFluxAndFreesTheWaits() {
        CpuTimeline queue = new CpuTimeline();
        TestSubscriber<Integer> out = TestSubscriber.create();
        Flux.range(0, 100).transform(engine.awaitEach(i -> {
            if (i == 5) {
                throw new IllegalStateException("no point for 5");
            }
            return queue.at(i + 1);
        }, 8, LONG)).subscribe(out);

        assertThat(out.getTerminalSignal().getThrowable()).isInstanceOf(IllegalStateException.class);
        assertThat(engine.pendingWaits()).isZero();
        assertThat(queue.pendingWaits()).isZero();
    }

    @Test
    void anUpstreamErrorFailsTheFluxAndFreesTheWaits() {
        CpuTimeline queue = new CpuTimeline();
        TestSubscriber<Integer> out = TestSubscriber.create();
        Flux.range(0, 3).concatWith(Flux.error(new IllegalStateException("source broke")))
                .transform(engine.awaitEach(i -> queue.at(i + 1), 8, LONG)).subscribe(out);

        assertThat(out.getTerminalSignal().getThrowable()).hasMessage("source broke");
        assertThat(engine.pendingWaits()).isZero();
        assertThat(queue.pendingWaits()).isZero();
    }

    @Test
    void signalledPointsFlowThroughWithoutRecursionAndColdSubscriptionsAreIndependent() {
        AtomicInteger pointsMade = new AtomicInteger();
        Flux<Integer> pipeline = Flux.range(0, 100_000).transform(engine.awaitEach(i -> {
            pointsMade.incrementAndGet();
            return SyncPoint.CPU;
        }, 4, LONG));
        assertThat(pointsMade).hasValue(0); // lazy

        List<Integer> first = pipeline.collectList().block();
        List<Integer> second = pipeline.collectList().block();

        List<Integer> expected = IntStream.range(0, 100_000).boxed().toList();
        assertThat(first).isEqualTo(expected);
        assertThat(second).isEqualTo(expected);
        assertThat(pointsMade).hasValue(200_000);
    }

    @Test
    void itemsCompletedFromManyThreadsAreAllEmittedInOrder() throws InterruptedException {
        int n = 20_000;
        CpuTimeline[] lines = timelines(n);
        List<Thread> signallers = new ArrayList<>();
        TestSubscriber<Integer> out = TestSubscriber.create();
        Flux.range(0, n).transform(engine.awaitEach(on(lines), 256, LONG)).subscribe(out);
        for (int t = 0; t < 4; t++) {
            int first = t;
            signallers.add(Thread.ofPlatform().start(() -> {
                for (int i = first; i < n; i += 4) {
                    lines[i].signal(1);
                }
            }));
        }
        for (Thread s : signallers) {
            s.join();
        }
        out.block(Duration.ofSeconds(30));
        assertThat(out.getReceivedOnNext()).isEqualTo(IntStream.range(0, n).boxed().toList());
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void aCancelRacingCompletionsOnAnotherThreadLeavesNoWaitBehind() throws InterruptedException {
        java.util.Random random = new java.util.Random(42);
        for (int round = 0; round < 200; round++) {
            boolean ordered = round % 2 == 0;
            CpuTimeline[] lines = timelines(64);
            List<Integer> order = new ArrayList<>(IntStream.range(0, 64).boxed().toList());
            java.util.Collections.shuffle(order, random);
            TestSubscriber<Integer> out = TestSubscriber.create();
            Function<Integer, SyncPoint> pointOf = on(lines);
            Flux.range(0, 64)
                    .transform(ordered ? engine.awaitEach(pointOf, 16, LONG) : engine.awaitEachUnordered(pointOf, 16, LONG))
                    .subscribe(out);
            Thread signaller = Thread.ofPlatform().start(() -> order.forEach(i -> lines[i].signal(1)));
            for (int spin = random.nextInt(2_000); spin > 0; spin--) {
                Thread.onSpinWait();
            }
            out.cancel();
            signaller.join();

            assertThat(engine.pendingWaits()).as("round %d", round).isZero();
            for (CpuTimeline line : lines) {
                assertThat(line.pendingWaits()).isZero();
            }
            assertThat(out.getReceivedOnNext().size()).isLessThanOrEqualTo(64);
            if (ordered) {
                assertThat(out.getReceivedOnNext()).isEqualTo(IntStream.range(0, out.getReceivedOnNext().size())
                        .boxed().toList());
            }
        }
    }
}
