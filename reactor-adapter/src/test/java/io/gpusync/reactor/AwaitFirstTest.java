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
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.subscriber.TestSubscriber;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SyncEngine#awaitFirst}: the winner is the very point passed in, losers are freed at once, failures
 * are set aside until all have failed. Host timelines complete waits on the signalling thread.
 */
class AwaitFirstTest {
    private static final Duration LONG = Duration.ofSeconds(30);
    private final SyncEngine engine = GpuSync.builder().name("await-first-test").build();
    private final CpuTimeline a = new CpuTimeline();
    private final CpuTimeline b = new CpuTimeline();
    private final CpuTimeline c = new CpuTimeline();
    private final SyncPoint pa = a.at(1);
    private final SyncPoint pb = b.at(1);
    private final SyncPoint pc = c.at(1);

    @AfterEach
    void dispose() {
        engine.dispose();
    }

    @Test
    void emitsTheVeryInstanceFirstSignalledAndFreesTheLosersAtOnce() {
        TestSubscriber<SyncPoint> out = TestSubscriber.create();
        engine.awaitFirst(List.of(pa, pb, pc), LONG).subscribe(out);
        assertThat(engine.pendingWaits()).isEqualTo(3);

        b.signal(1);

        assertThat(out.getReceivedOnNext()).singleElement().isSameAs(pb);
        assertThat(out.isTerminatedComplete()).isTrue();
        assertThat(engine.pendingWaits()).isZero();
        assertThat(a.pendingWaits()).isZero();
        assertThat(c.pendingWaits()).isZero();
    }

    @Test
    void aSignalledPointWinsAtSubscription() {
        b.signal(1);
        StepVerifier.create(engine.awaitFirst(List.of(pa, pb), LONG)).expectNextMatches(p -> p == pb).verifyComplete();
        assertThat(a.pendingWaits()).isZero();
        StepVerifier.create(GpuSync.awaitFirst(List.of(SyncPoint.CPU), LONG))
                .expectNextMatches(p -> p == SyncPoint.CPU).verifyComplete();
    }

    @Test
    void aFailedPointIsSetAsideWhileAnotherMayStillBeSignalled() {
        TestSubscriber<SyncPoint> out = TestSubscriber.create();
        engine.awaitFirst(List.of(pa, pb, pc), LONG).subscribe(out);

        a.fail(new DeviceLostException(BackendKind.CPU, "a lost"));
        assertThat(out.isTerminated()).isFalse();
        c.signal(1);

        assertThat(out.getReceivedOnNext()).singleElement().isSameAs(pc);
        assertThat(out.isTerminatedComplete()).isTrue();
        assertThat(b.pendingWaits()).isZero();
    }

    @Test
    void whenAllFailItFailsWithTheFirstFailureTheOthersSuppressed() {
        TestSubscriber<SyncPoint> out = TestSubscriber.create();
        engine.awaitFirst(List.of(pa, pb, pc), LONG).subscribe(out);
        DeviceLostException first = new DeviceLostException(BackendKind.CPU, "b lost first");

        b.fail(first);
        c.fail(new DeviceLostException(BackendKind.CPU, "c lost"));
        assertThat(out.isTerminated()).isFalse();
        a.fail(new DeviceLostException(BackendKind.CPU, "a lost"));

        Throwable error = out.getTerminalSignal().getThrowable();
        assertThat(error).isSameAs(first);
        assertThat(error.getSuppressed()).extracting(Throwable::getMessage).containsExactly("c lost", "a lost");
    }

    @Test
    void noneSignalledWithinTheTimeoutIsASyncTimeoutException() {
        StepVerifier.withVirtualTime(() -> engine.awaitFirst(List.of(pa, pb), Duration.ofSeconds(5)))
                .expectSubscription()
                .expectNoEvent(Duration.ofSeconds(4))
                .thenAwait(Duration.ofSeconds(1))
                .expectError(SyncTimeoutException.class)
                .verify(Duration.ofSeconds(10));
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void anEmptyCollectionOrANegativeTimeoutFailsThroughOnError() {
        StepVerifier.create(engine.awaitFirst(List.of(), LONG)).verifyError(SyncInvalidArgumentException.class);
        StepVerifier.create(engine.awaitFirst(List.of(pa), Duration.ofSeconds(-1)))
                .verifyError(SyncInvalidArgumentException.class);
        assertThatThrownBy(() -> engine.awaitFirst(java.util.Arrays.asList(pa, null), LONG))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void cancellingFreesEveryWait() {
        TestSubscriber<SyncPoint> out = TestSubscriber.create();
        engine.awaitFirst(List.of(pa, pb, pc), LONG).subscribe(out);
        assertThat(engine.pendingWaits()).isEqualTo(3);

        out.cancel();

        assertThat(engine.pendingWaits()).isZero();
        assertThat(a.pendingWaits() + b.pendingWaits() + c.pendingWaits()).isZero();
    }

    @Test
    void theWaitsStartAtSubscriptionAndTheWinnerWaitsForDemand() {
        Mono<SyncPoint> first = engine.awaitFirst(List.of(pa, pb), LONG);
        assertThat(engine.pendingWaits()).isZero(); // lazy
        TestSubscriber<SyncPoint> out = TestSubscriber.builder().initialRequest(0).build();
        first.subscribe(out);
        assertThat(engine.pendingWaits()).isEqualTo(2);

        a.signal(1);
        assertThat(out.getReceivedOnNext()).isEmpty();
        assertThat(engine.pendingWaits()).isZero();
        out.request(1);

        assertThat(out.getReceivedOnNext()).singleElement().isSameAs(pa);
        assertThat(out.isTerminatedComplete()).isTrue();
    }

    @Test
    void disposingTheEngineFailsItWithSyncCancelledException() {
        SyncEngine own = GpuSync.builder().name("await-first-disposed").build();
        TestSubscriber<SyncPoint> out = TestSubscriber.create();
        own.awaitFirst(List.of(pa, pb), LONG).subscribe(out);

        own.dispose();

        assertThat(out.getTerminalSignal().getThrowable()).isInstanceOf(SyncCancelledException.class);
        assertThat(a.pendingWaits() + b.pendingWaits()).isZero();
    }
}
