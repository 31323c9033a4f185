package io.gpusync.internal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Housekeeping runs each backend's tasks in a lane of its own. A driver call that never returns (NVIDIA's
 * {@code vkDestroySemaphore} held the one housekeeping thread for minutes in the H200 soak stalls) must not hold up
 * another backend's releases or sweeps; within a lane, tasks still run one at a time in submission order.
 */
class HousekeepingTest {

    @Test
    void aTaskStuckInOneBackendsLaneHoldsUpNoOtherLaneAndOnlyItsOwnLaneWaitsBehindIt() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch driverReturns = new CountDownLatch(1);
        Object stuckBackend = new Object(); // a lane of its own: java.lang
        try {
            Housekeeping.execute(stuckBackend, () -> { // a driver call that does not return
                entered.countDown();
                awaitQuietly(driverReturns);
            });
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();

            CompletableFuture<String> otherBackend = new CompletableFuture<>();
            Housekeeping.execute(new ArrayList<>(), () -> otherBackend.complete(Thread.currentThread().getName()));
            assertThat(otherBackend.get(5, TimeUnit.SECONDS)).isEqualTo("gpusync-housekeeping-util");

            CompletableFuture<String> chore = new CompletableFuture<>(); // a sweep: the lane of this package
            Housekeeping.schedule(() -> chore.complete(Thread.currentThread().getName()), 1, TimeUnit.MILLISECONDS);
            assertThat(chore.get(5, TimeUnit.SECONDS)).isEqualTo("gpusync-housekeeping-internal");

            List<Integer> order = new ArrayList<>();
            CompletableFuture<Void> behind = new CompletableFuture<>();
            Housekeeping.execute(stuckBackend, () -> order.add(1));
            Housekeeping.execute(stuckBackend, () -> {
                order.add(2);
                behind.complete(null);
            });
            assertThat(behind).isNotDone(); // its own lane is still inside the stuck call
            driverReturns.countDown();
            behind.get(5, TimeUnit.SECONDS);
            assertThat(order).containsExactly(1, 2);
        } finally {
            driverReturns.countDown();
        }
    }

    @Test
    void everyLaneThreadIsAHousekeepingThread() throws Exception {
        CompletableFuture<Boolean> seen = new CompletableFuture<>();
        Housekeeping.execute(new StringBuilder(), () -> seen.complete(Housekeeping.isCurrentThread()));
        assertThat(seen.get(5, TimeUnit.SECONDS)).isTrue();
        assertThat(Housekeeping.isCurrentThread()).isFalse();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
