package io.gpusync.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** How completions seen on driver threads reach the engine's loops: in batches, in order, never lost. */
class LoopHandOffTest {
    private final ExecutorService loop = Executors.newSingleThreadExecutor();
    private final AtomicInteger loopTasks = new AtomicInteger();
    /** The loop as the engine sees it: counts every task handed to it (each would wake a sleeping loop). */
    private final java.util.concurrent.Executor countingLoop = task -> {
        loopTasks.incrementAndGet();
        loop.execute(task);
    };

    @AfterEach
    void stopTheLoop() {
        loop.shutdownNow();
    }

    @Test
    void aThousandCompletionsInOnePassReachTheLoopAsAFewTasks() throws InterruptedException {
        LoopHandOff handOff = new LoopHandOff(countingLoop);
        CountDownLatch loopBusy = new CountDownLatch(1);
        loop.execute(() -> await(loopBusy)); // the loop is busy while the driver thread completes the burst
        CountDownLatch ran = new CountDownLatch(1_000);
        for (int i = 0; i < 1_000; i++) {
            handOff.execute(ran::countDown);
        }
        loopBusy.countDown();

        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(loopTasks.get()).as("tasks on the loop for 1,000 completions")
                .isLessThanOrEqualTo(1 + 1_000 / LoopHandOff.DRAIN_MAX);
    }

    @Test
    void completionsRunInTheOrderTheyWereHandedOver() throws InterruptedException {
        LoopHandOff handOff = new LoopHandOff(countingLoop);
        List<Integer> seen = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch ran = new CountDownLatch(5_000);
        for (int i = 0; i < 5_000; i++) {
            int n = i;
            handOff.execute(() -> {
                seen.add(n);
                ran.countDown();
            });
        }
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        for (int i = 0; i < 5_000; i++) {
            assertThat(seen.get(i)).isEqualTo(i);
        }
    }

    @Test
    void noCompletionIsLostWhenManyThreadsHandOverAtOnce() throws InterruptedException {
        LoopHandOff handOff = new LoopHandOff(countingLoop);
        int threads = 4;
        int each = 20_000;
        CountDownLatch ran = new CountDownLatch(threads * each);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            ts.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < each; i++) {
                    handOff.execute(ran::countDown);
                }
            }));
        }
        for (Thread t : ts) {
            t.join();
        }
        assertThat(ran.await(20, TimeUnit.SECONDS)).as("every completion ran").isTrue();
    }

    @Test
    void whenTheLoopsRefuseCompletionsStillRun() throws InterruptedException {
        LoopHandOff handOff = new LoopHandOff(task -> {
            throw new RejectedExecutionException("the loops are shut down");
        });
        CountDownLatch ran = new CountDownLatch(100);
        for (int i = 0; i < 100; i++) {
            handOff.execute(ran::countDown);
        }
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aThrowingCompletionDoesNotStrandTheOthers() throws InterruptedException {
        LoopHandOff handOff = new LoopHandOff(countingLoop);
        CountDownLatch ran = new CountDownLatch(2);
        handOff.execute(ran::countDown);
        handOff.execute(() -> {
            throw new IllegalStateException("a subscriber's bug (test)");
        });
        handOff.execute(ran::countDown);
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
