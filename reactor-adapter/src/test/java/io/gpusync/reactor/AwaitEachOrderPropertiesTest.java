package io.gpusync.reactor;

import io.gpusync.cpu.CpuTimeline;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import reactor.core.publisher.Flux;
import reactor.test.subscriber.TestSubscriber;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Emission order of {@link SyncEngine#awaitEach} and {@link SyncEngine#awaitEachUnordered} under 10,000 random
 * completion orders (and in-flight bounds): after every signal, the ordered operator has emitted exactly the
 * longest prefix of the source whose points are all signalled, and the unordered one every signalled item
 * that the bound let in, in the order signalled. Waits complete on the signalling thread (host timelines),
 * so each step is checked as soon as its signal returns.
 */
class AwaitEachOrderPropertiesTest {
    private static final Duration LONG = Duration.ofSeconds(30);

    record Case(List<Integer> completionOrder, int maxInFlight) {
    }

    @Provide
    Arbitrary<Case> cases() {
        Arbitrary<List<Integer>> orders = Arbitraries.integers().between(1, 64)
                .flatMap(n -> Arbitraries.shuffle(IntStream.range(0, n).boxed().toList()));
        return orders.flatMap(order -> Combinators.combine(Arbitraries.just(order),
                Arbitraries.integers().between(1, order.size() + 2)).as(Case::new));
    }

    @Property(tries = 10_000)
    void orderedEmitsTheLongestSignalledPrefixAfterEverySignal(@ForAll("cases") Case c) {
        int n = c.completionOrder().size();
        CpuTimeline[] lines = new CpuTimeline[n];
        for (int i = 0; i < n; i++) {
            lines[i] = new CpuTimeline();
        }
        TestSubscriber<Integer> out = TestSubscriber.create();
        Flux.range(0, n).transform(GpuSync.awaitEach((Integer i) -> lines[i].at(1), c.maxInFlight(), LONG))
                .subscribe(out);
        boolean[] signalled = new boolean[n];
        int prefix = 0;
        for (int item : c.completionOrder()) {
            lines[item].signal(1);
            signalled[item] = true;
            while (prefix < n && signalled[prefix]) {
                prefix++;
            }
            assertThat(out.getReceivedOnNext()).isEqualTo(IntStream.range(0, prefix).boxed().toList());
        }
        assertThat(out.isTerminatedComplete()).isTrue();
    }

    @Property(tries = 10_000)
    void unorderedEmitsInCompletionOrderWithinTheBound(@ForAll("cases") Case c) {
        int n = c.completionOrder().size();
        int bound = c.maxInFlight();
        CpuTimeline[] lines = new CpuTimeline[n];
        for (int i = 0; i < n; i++) {
            lines[i] = new CpuTimeline();
        }
        TestSubscriber<Integer> out = TestSubscriber.create();
        Flux.range(0, n).transform(GpuSync.awaitEachUnordered((Integer i) -> lines[i].at(1), bound, LONG))
                .subscribe(out);
        // model: items enter in source order while fewer than `bound` are in flight; an entering item whose
        // point is already signalled is emitted at once (and lets the next one in)
        List<Integer> expected = new ArrayList<>();
        boolean[] signalled = new boolean[n];
        int entered = Math.min(bound, n);
        for (int item : c.completionOrder()) {
            lines[item].signal(1);
            signalled[item] = true;
            if (item < entered) {
                expected.add(item);
                while (entered < n && entered - expected.size() < bound) {
                    int next = entered++;
                    if (signalled[next]) {
                        expected.add(next);
                    }
                }
            }
            assertThat(out.getReceivedOnNext()).isEqualTo(expected);
        }
        assertThat(out.isTerminatedComplete()).isTrue();
    }
}
