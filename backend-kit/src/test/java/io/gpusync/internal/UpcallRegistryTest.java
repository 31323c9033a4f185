package io.gpusync.internal;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class UpcallRegistryTest {

    @Test
    void aSlotIsFiredOrCancelledExactlyOnceWhoeverComesFirst() throws Exception {
        UpcallRegistry<AtomicInteger> registry = new UpcallRegistry<>("test");
        for (int round = 0; round < 2_000; round++) {
            AtomicInteger fired = new AtomicInteger();
            long key = registry.register(fired);
            AtomicInteger cancelled = new AtomicInteger();
            CountDownLatch go = new CountDownLatch(1);
            Thread driver = Thread.ofPlatform().start(() -> {
                await(go);
                registry.fire(key, AtomicInteger::incrementAndGet);
            });
            go.countDown();
            if (registry.cancel(key)) {
                cancelled.incrementAndGet();
            }
            driver.join();
            assertThat(fired.get() + cancelled.get()).as("round " + round).isEqualTo(1);
        }
        assertThat(registry.pending()).isZero();
    }

    @Test
    void aLateUpcallForACancelledKeyFindsNothing() {
        UpcallRegistry<Runnable> registry = new UpcallRegistry<>("test");
        List<String> ran = new CopyOnWriteArrayList<>();
        long key = registry.register(() -> ran.add("slot"));
        assertThat(registry.cancel(key)).isTrue();
        registry.fire(key, Runnable::run);
        assertThat(ran).isEmpty();
        assertThat(registry.cancel(key)).isFalse();
    }

    @Test
    void anUpcallRunsItsSlotInsideTheUpcallScopeAndNothingEscapesIt() {
        UpcallRegistry<Runnable> registry = new UpcallRegistry<>("test");
        List<Boolean> inside = new CopyOnWriteArrayList<>();
        registry.fire(registry.register(() -> inside.add(UpcallRegistry.inUpcall())), Runnable::run);
        registry.fire(registry.register(() -> {
            throw new IllegalStateException("a slot's bug must not reach the driver");
        }), Runnable::run);
        assertThat(inside).containsExactly(true);
        assertThat(UpcallRegistry.inUpcall()).isFalse();
        assertThat(registry.pending()).isZero();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
