package io.gpusync.reactor;

import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Scannable;
import reactor.core.Scannable.Attr;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's operators are {@link Scannable} as reactor-core's are: each is a step named after its engine method
 * ({@code gpusync.await}, …) in {@code Scannable.from(publisher).steps()}, runs asynchronously, and its subscriptions
 * answer {@code PARENT}, {@code ACTUAL}, {@code CANCELLED} and {@code TERMINATED}, with their member waits as inners;
 * Reactor's assembly hooks see them, so {@code Hooks.onOperatorDebug()} traces a failed wait to where it was made.
 */
class ScannableOperatorsTest {
    private static final Duration LONG = Duration.ofSeconds(30);

    private final SyncEngine engine = GpuSync.builder().name("scannable-test").build();
    private final CpuTimeline timeline = new CpuTimeline();

    @AfterEach
    void dispose() {
        engine.dispose();
        Hooks.resetOnOperatorDebug();
    }

    @Test
    void everyOperatorIsAStepNamedAfterItsEngineMethod() {
        SyncPoint p = timeline.at(1);
        List<SyncPoint> ps = List.of(p, timeline.at(2));
        assertThat(Scannable.from(engine.await(p).hide().map(v -> v)).steps())
                .containsExactly("gpusync.await", "hide", "map");
        assertThat(Scannable.from(engine.awaitAll(ps, LONG)).stepName()).isEqualTo("gpusync.awaitAll");
        assertThat(Scannable.from(engine.awaitAny(ps, LONG)).stepName()).isEqualTo("gpusync.awaitAny");
        assertThat(Scannable.from(engine.awaitFirst(ps, LONG)).stepName()).isEqualTo("gpusync.awaitFirst");
        assertThat(Scannable.from(Flux.range(0, 2).transform(engine.awaitEach(ps::get, 2, LONG)).filter(i -> true))
                .steps()).containsSubsequence("gpusync.awaitEach", "filter").hasSize(3);
        assertThat(Scannable.from(Flux.range(0, 2).transform(engine.awaitEachUnordered(ps::get, 2, LONG))).stepName())
                .isEqualTo("gpusync.awaitEachUnordered");
    }

    @Test
    void everyOperatorRunsAsynchronouslyAndHasNoUserGivenName() {
        SyncPoint p = timeline.at(1);
        List<SyncPoint> ps = List.of(p);
        for (Object operator : List.of(engine.await(p), engine.awaitAll(ps, LONG), engine.awaitAny(ps, LONG),
                engine.awaitFirst(ps, LONG), Flux.just(0).transform(engine.awaitEach(ps::get, 1, LONG)))) {
            Scannable s = Scannable.from(operator);
            assertThat(s.isScanAvailable()).as("%s", operator).isTrue();
            assertThat(s.scan(Attr.RUN_STYLE)).as("%s", operator).isEqualTo(Attr.RunStyle.ASYNC);
            assertThat(s.scan(Attr.NAME)).as("%s", operator).isNull();
        }
    }

    @Test
    void aWaitsSubscriptionNamesItsSubscriberAndTellsACancelFromATermination() {
        Captured<Void> cancelled = new Captured<>();
        engine.await(timeline.at(1), LONG).subscribe(cancelled);
        Scannable wait = Scannable.from(cancelled.subscription);
        assertThat(wait.scanUnsafe(Attr.ACTUAL)).isSameAs(cancelled);
        assertThat(wait.scan(Attr.CANCELLED)).isFalse();
        assertThat(wait.scan(Attr.TERMINATED)).isFalse();
        cancelled.cancel();
        assertThat(wait.scan(Attr.CANCELLED)).isTrue();
        assertThat(wait.scan(Attr.TERMINATED)).isFalse();
        assertThat(wait.scanUnsafe(Attr.ACTUAL)).as("dropped once the wait has ended (§3.13)").isNull();

        Captured<Void> completed = new Captured<>();
        engine.await(timeline.at(2), LONG).subscribe(completed);
        Scannable other = Scannable.from(completed.subscription);
        timeline.signal(2);
        assertThat(other.scan(Attr.TERMINATED)).isTrue();
        assertThat(other.scan(Attr.CANCELLED)).isFalse();
    }

    @Test
    void aGroupsSubscriptionHasItsMemberWaitsAsInnersEachWithItsWaitAsParent() {
        Captured<Void> out = new Captured<>();
        engine.awaitAll(List.of(timeline.at(1), timeline.at(2)), LONG).subscribe(out);
        Scannable group = Scannable.from(out.subscription);
        assertThat(group.scanUnsafe(Attr.ACTUAL)).isSameAs(out);
        List<? extends Scannable> members = group.inners().toList();
        assertThat(members).hasSize(2);
        for (Scannable m : members) {
            assertThat(m.scan(Attr.ACTUAL)).isSameAs(group);
            assertThat(m.scan(Attr.PARENT)).isInstanceOf(PendingWait.class);
            assertThat(m.scan(Attr.RUN_STYLE)).isEqualTo(Attr.RunStyle.SYNC);
        }
        timeline.signal(1);
        assertThat(members.get(0).scan(Attr.TERMINATED)).isTrue();
        out.cancel();
        assertThat(group.scan(Attr.CANCELLED)).isTrue();
        assertThat(group.scan(Attr.TERMINATED)).isFalse();
        assertThat(members.get(1).scan(Attr.CANCELLED)).isTrue();
    }

    @Test
    void aRacesSubscriptionHasItsMemberWaitsAsInners() {
        Captured<SyncPoint> out = new Captured<>();
        CpuTimeline winner = new CpuTimeline();
        engine.awaitFirst(List.of(timeline.at(1), winner.at(1), timeline.at(2)), LONG).subscribe(out);
        Scannable race = Scannable.from(out.subscription);
        assertThat(race.scanUnsafe(Attr.ACTUAL)).isSameAs(out);
        assertThat(race.inners()).hasSize(3).allSatisfy(m -> assertThat(m.scan(Attr.ACTUAL)).isSameAs(race));
        winner.signal(1);
        assertThat(race.scan(Attr.TERMINATED)).isTrue();
        assertThat(race.inners().filter(m -> m.scan(Attr.CANCELLED))).as("the losers, freed").hasSize(2);
    }

    @Test
    void anAwaitEachSubscriptionAnswersLikeAReactorOperatorWithTheItemsInFlightAsInners() {
        List<SyncPoint> ps = List.of(timeline.at(1), timeline.at(2), timeline.at(3));
        Captured<Integer> out = new Captured<>();
        Flux.range(0, 3).transform(engine.awaitEach(ps::get, 2, LONG)).subscribe(out);
        Scannable pipeline = Scannable.from(out.subscription);
        assertThat(pipeline.scanUnsafe(Attr.ACTUAL)).isSameAs(out);
        assertThat(Scannable.from(pipeline.scan(Attr.PARENT)).scan(Attr.ACTUAL)).as("the source's subscription")
                .isSameAs(pipeline);
        assertThat(pipeline.scan(Attr.PREFETCH)).isEqualTo(2);
        assertThat(pipeline.scan(Attr.REQUESTED_FROM_DOWNSTREAM)).isEqualTo(Long.MAX_VALUE);
        assertThat(pipeline.scan(Attr.BUFFERED)).as("maxInFlight items in flight").isEqualTo(2);
        assertThat(pipeline.inners()).hasSize(2)
                .allSatisfy(item -> assertThat(item.scan(Attr.ACTUAL)).isSameAs(pipeline));
        out.cancel();
        assertThat(pipeline.scan(Attr.CANCELLED)).isTrue();
        assertThat(pipeline.scan(Attr.TERMINATED)).isFalse();
        assertThat(pipeline.inners()).as("freed at once").isEmpty();
    }

    @Test
    void withOperatorDebugAFailedWaitIsTracedToWhereItWasAssembled() {
        Hooks.onOperatorDebug();
        Mono<Void> wait = engine.await(timeline.at(1), Duration.ZERO); // not signalled: fails at once
        Throwable error = wait.onErrorResume(e -> Mono.error(e)).materialize().block().getThrowable();
        assertThat(error).isInstanceOf(SyncTimeoutException.class);
        assertThat(error.getSuppressed()).as("the assembly trace").anySatisfy(trace -> assertThat(trace.getMessage())
                .contains("io.gpusync.reactor.WaitMono"));
    }

    /** A subscriber that keeps its subscription, requests everything and takes errors. */
    private static final class Captured<T> extends BaseSubscriber<T> {
        volatile Subscription subscription;

        @Override
        protected void hookOnSubscribe(Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        protected void hookOnError(Throwable error) {
            // the waits still pending when the test's engine is disposed end so
        }
    }
}
