package io.gpusync.reactor;

import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Operators;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine's registry of pending waits: what is added is counted and listed until removed, removing twice or
 * removing from another thread than the one that added is fine, and the stripes stay consistent when many threads
 * add and remove at once.
 */
class PendingWaitsTest {
    private final CpuTimeline timeline = new CpuTimeline();

    private PendingWait newWait() {
        return new PendingWait((w, o) -> { }, timeline.at(1).waiter(), Duration.ofSeconds(1),
                Operators.emptySubscriber(), null);
    }

    @Test
    void addedWaitsAreCountedAndListedUntilRemovedAndASecondRemoveDoesNothing() {
        PendingWaits registry = new PendingWaits(4);
        List<PendingWait> waits = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            PendingWait w = newWait();
            registry.add(w);
            waits.add(w);
        }
        assertThat(registry.size()).isEqualTo(100);
        assertThat(registry.snapshot()).containsExactlyInAnyOrderElementsOf(waits);
        for (int i = 0; i < 100; i += 2) {
            registry.remove(waits.get(i));
            registry.remove(waits.get(i));
        }
        assertThat(registry.size()).isEqualTo(50);
        assertThat(registry.snapshot()).hasSize(50).allSatisfy(w -> assertThat(waits.indexOf(w) % 2).isOne());
        waits.forEach(registry::remove);
        assertThat(registry.size()).isZero();
        assertThat(registry.snapshot()).isEmpty();
    }

    @Test
    void threadsAddingAndOthersRemovingLeaveTheCountsConsistent() throws Exception {
        PendingWaits registry = new PendingWaits();
        int threads = 4;
        int each = 20_000;
        PendingWait[][] added = new PendingWait[threads][each];
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> adders = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            adders.add(Thread.ofPlatform().start(() -> {
                await(start);
                for (int i = 0; i < each; i++) {
                    PendingWait w = newWait();
                    registry.add(w);
                    added[me][i] = w;
                }
            }));
        }
        start.countDown();
        for (Thread t : adders) {
            t.join();
        }
        assertThat(registry.size()).isEqualTo(threads * each);
        List<Thread> removers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int other = (t + 1) % threads; // removes what another thread added (other stripes)
            removers.add(Thread.ofPlatform().start(() -> {
                for (PendingWait w : added[other]) {
                    registry.remove(w);
                }
            }));
        }
        for (Thread t : removers) {
            t.join();
        }
        assertThat(registry.size()).isZero();
        assertThat(registry.snapshot()).isEmpty();
    }

    /**
     * A wait cancelled on another thread while its subscribing thread lists it (EngineWaits lists a wait after
     * onSubscribe, and removes it again if it is done by then): found as {@code pendingWaits() == -1} after
     * BlockAndFutureTest's futures cancelled while their start was on the engine's loop. The remover read the stripe
     * the adder had not yet written, and unlinked the wait from the wrong stripe's list under the wrong lock.
     */
    @Test
    void aRemoveRacingTheAddOfTheSameWaitLeavesTheRegistryConsistent() throws Exception {
        PendingWaits registry = new PendingWaits(8);
        int rounds = 100_000;
        PendingWait[] waits = new PendingWait[rounds];
        java.util.concurrent.atomic.AtomicInteger round = new java.util.concurrent.atomic.AtomicInteger(-1);
        Thread adder = Thread.ofPlatform().start(() -> {
            for (int i = 0; i < rounds; i++) {
                PendingWait w = newWait(); // made on the adding thread, as EngineWaits does
                waits[i] = w;
                round.set(i); // the remover may go now, while the add below runs
                registry.add(w);
                registry.remove(w); // EngineWaits: done by the time it was listed, so removed again here
            }
        });
        Thread remover = Thread.ofPlatform().start(() -> {
            for (int i = 0; i < rounds; i++) {
                while (round.get() < i) {
                    Thread.onSpinWait();
                }
                registry.remove(waits[i]); // the cancel's termination, on another thread
            }
        });
        adder.join();
        remover.join();
        assertThat(registry.size()).isZero();
        assertThat(registry.snapshot()).isEmpty();
        PendingWait later = newWait();
        registry.add(later);
        assertThat(registry.snapshot()).as("the stripes' lists are intact").containsExactly(later);
        assertThat(registry.size()).isOne();
    }

    @Test
    void theNumberOfStripesMustBeAPowerOfTwo() {
        assertThatThrownBy(() -> new PendingWaits(3)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new PendingWaits().stripes()).isPositive().matches(s -> Integer.bitCount(s) == 1);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
