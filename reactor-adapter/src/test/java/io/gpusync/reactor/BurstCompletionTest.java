package io.gpusync.reactor;

import io.gpusync.SyncCancelledException;
import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A burst through the engine — many host-timeline waits, the timeline signalled value by value — completes every
 * wait exactly once and never a cancelled one, whether the waits are still spinning on the pollers or already
 * registered as callbacks, whether subscribing races the signals, and leaves nothing pending behind.
 */
class BurstCompletionTest {
    private final SyncEngine engine = GpuSync.builder().name("burst-test").build();

    @AfterEach
    void dispose() {
        engine.dispose();
    }

    /** Counts the terminal signals of wait {@code index}: completions, errors. */
    private record Counting(int index, AtomicIntegerArray completions, AtomicIntegerArray errors,
                            Subscription[] subscriptions) implements CoreSubscriber<Void> {
        @Override
        public void onSubscribe(Subscription s) {
            subscriptions[index] = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Void v) {
        }

        @Override
        public void onError(Throwable t) {
            errors.incrementAndGet(index);
        }

        @Override
        public void onComplete() {
            completions.incrementAndGet(index);
        }
    }

    private static void awaitCount(AtomicIntegerArray counts, int expected) {
        long deadline = System.nanoTime() + 60_000_000_000L; // a bound for a hang, not a timing assertion
        while (sum(counts) < expected && System.nanoTime() < deadline) {
            LockSupport.parkNanos(1_000_000);
        }
    }

    private static int sum(AtomicIntegerArray a) {
        int s = 0;
        for (int i = 0; i < a.length(); i++) {
            s += a.get(i);
        }
        return s;
    }

    @Test
    void everyWaitOfABurstCompletesExactlyOnceAndCancelledOnesNever() {
        int n = 20_000;
        CpuTimeline timeline = new CpuTimeline();
        AtomicIntegerArray completions = new AtomicIntegerArray(n);
        AtomicIntegerArray errors = new AtomicIntegerArray(n);
        Subscription[] subs = new Subscription[n];
        for (int i = 0; i < n; i++) {
            // two waits share some values (i / 2 for the first half), the rest one value each
            long value = i < n / 2 ? 1 + i / 2 : 1 + i;
            engine.await(timeline.at(value), Duration.ofSeconds(120)).subscribe(new Counting(i, completions, errors, subs));
        }
        int cancelled = 0;
        for (int i = 0; i < n; i += 7) {
            subs[i].cancel();
            cancelled++;
        }
        for (long v = 1; v <= n; v++) {
            timeline.signal(v);
        }
        awaitCount(completions, n - cancelled);
        for (int i = 0; i < n; i++) {
            assertThat(completions.get(i)).as("completions of wait %d", i).isEqualTo(i % 7 == 0 ? 0 : 1);
            assertThat(errors.get(i)).as("errors of wait %d", i).isZero();
        }
        assertThat(engine.pendingWaits()).isZero();
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void subscribingWhileAnotherThreadSignalsCompletesEveryWaitOnce() throws Exception {
        int n = 50_000;
        CpuTimeline timeline = new CpuTimeline();
        AtomicIntegerArray completions = new AtomicIntegerArray(n);
        AtomicIntegerArray errors = new AtomicIntegerArray(n);
        Subscription[] subs = new Subscription[n];
        Thread signaller = Thread.ofPlatform().start(() -> {
            for (long v = 1; v <= n; v++) { // runs ahead of or behind the subscriptions, as it happens
                timeline.signal(v);
            }
        });
        for (int i = 0; i < n; i++) {
            engine.await(timeline.at(1 + i), Duration.ofSeconds(120)).subscribe(new Counting(i, completions, errors, subs));
        }
        signaller.join();
        awaitCount(completions, n);
        for (int i = 0; i < n; i++) {
            assertThat(completions.get(i)).as("completions of wait %d", i).isEqualTo(1);
        }
        assertThat(sum(errors)).isZero();
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void disposingTheEngineMidBurstTerminatesEveryRemainingWaitOnceWithCancellation() {
        int n = 10_000;
        CpuTimeline timeline = new CpuTimeline();
        AtomicIntegerArray completions = new AtomicIntegerArray(n);
        AtomicIntegerArray errors = new AtomicIntegerArray(n);
        Subscription[] subs = new Subscription[n];
        SyncEngine own = GpuSync.builder().name("burst-dispose").build();
        int[] kinds = new int[n];
        for (int i = 0; i < n; i++) {
            int index = i;
            own.await(timeline.at(1 + i), Duration.ofSeconds(120)).subscribe(new CoreSubscriber<>() {
                @Override
                public void onSubscribe(Subscription s) {
                    subs[index] = s;
                }

                @Override
                public void onNext(Void v) {
                }

                @Override
                public void onError(Throwable t) {
                    kinds[index] = t instanceof SyncCancelledException ? 2 : 3;
                    errors.incrementAndGet(index);
                }

                @Override
                public void onComplete() {
                    kinds[index] = 1;
                    completions.incrementAndGet(index);
                }
            });
        }
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (timeline.pendingWaits() < n && System.nanoTime() < deadline) { // every wait spun out to its callback
            LockSupport.parkNanos(1_000_000);
        }
        timeline.signal(n / 2); // completes the first half in place, on this thread
        own.dispose();
        timeline.signal(n);
        for (int i = 0; i < n; i++) {
            assertThat(completions.get(i) + errors.get(i)).as("terminal signals of wait %d", i).isEqualTo(1);
            assertThat(kinds[i]).as("outcome of wait %d", i).isEqualTo(i < n / 2 ? 1 : 2);
        }
        assertThat(own.pendingWaits()).isZero();
    }
}
