package io.gpusync.test;

import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncPoint;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A fake queue runs its work in order, each item for its duration, and fails points as a lost device does. */
class FakeGpuQueueTest {
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final FakeGpuQueue queue = FakeGpuQueue.on(clock);

    @Test
    void eachItemStartsWhenTheOneBeforeItEnds() {
        SyncPoint first = queue.submit(Duration.ofMillis(3));
        SyncPoint second = queue.submit(Duration.ofMillis(1));

        clock.advanceTimeBy(Duration.ofMillis(3));
        assertThat(first.waiter().isSignaled()).isTrue();
        assertThat(second.waiter().isSignaled()).as("second runs 3..4 ms").isFalse();

        clock.advanceTimeBy(Duration.ofMillis(1));
        assertThat(second.waiter().isSignaled()).isTrue();
        assertThat(queue.completed()).isEqualTo(2);
    }

    @Test
    void workSubmittedToAnIdleQueueStartsAtOnce() {
        queue.submit(Duration.ofMillis(1));
        clock.advanceTimeBy(Duration.ofMillis(10)); // idle from 1 ms to 10 ms
        SyncPoint late = queue.submit(Duration.ofMillis(2));

        clock.advanceTimeBy(Duration.ofMillis(1));
        assertThat(late.waiter().isSignaled()).isFalse();
        clock.advanceTimeBy(Duration.ofMillis(1));
        assertThat(late.waiter().isSignaled()).isTrue();
    }

    @Test
    void aZeroDurationItemEndsWithTheItemBeforeIt() {
        SyncPoint kernel = queue.submit(Duration.ofMillis(5));
        SyncPoint marker = queue.submit(Duration.ZERO);

        clock.advanceTimeBy(Duration.ofMillis(4));
        assertThat(marker.waiter().isSignaled()).isFalse();
        clock.advanceTimeBy(Duration.ofMillis(1));
        assertThat(kernel.waiter().isSignaled()).isTrue();
        assertThat(marker.waiter().isSignaled()).isTrue();
    }

    @Test
    void aFaultLosesTheDeviceWhenItsWorkEnds() {
        SyncPoint before = queue.submit(Duration.ofMillis(1));
        SyncPoint fault = queue.submitFault(Duration.ofMillis(1));
        SyncPoint after = queue.submit(Duration.ofMillis(1));

        clock.advanceTimeBy(Duration.ofMillis(1));
        assertThat(before.waiter().isSignaled()).isTrue();
        assertThat(fault.waiter().isSignaled()).as("still running").isFalse();

        clock.advanceTimeBy(Duration.ofMillis(1));
        assertThatThrownBy(() -> fault.waiter().isSignaled()).isInstanceOf(DeviceLostException.class)
                .satisfies(e -> assertThat(((DeviceLostException) e).kind()).isEqualTo(ErrorKind.FATAL));
        assertThatThrownBy(() -> after.waiter().await(Duration.ofSeconds(5))).isInstanceOf(DeviceLostException.class);
        assertThatThrownBy(() -> before.waiter().isSignaled()).as("a lost device answers no probe, as CUDA's does")
                .isInstanceOf(DeviceLostException.class);
    }

    @Test
    void losingTheDeviceFailsPendingAndLaterPointsButNotWaitsThatEnded() {
        SyncPoint done = queue.submit(Duration.ofMillis(1));
        SyncPoint pending = queue.submit(Duration.ofMillis(1));
        CompletableFuture<Void> ended = CompletableFuture.runAsync(() -> done.waiter().await(Duration.ofSeconds(30)));
        clock.advanceTimeBy(Duration.ofMillis(1));
        ended.join();

        queue.loseDevice(new IllegalStateException("Xid 79: fell off the bus"));

        assertThat(ended).isCompleted();
        assertThatThrownBy(() -> pending.waiter().isSignaled()).isInstanceOf(DeviceLostException.class)
                .hasRootCauseMessage("Xid 79: fell off the bus");
        SyncPoint later = queue.submit(Duration.ZERO);
        assertThatThrownBy(() -> later.waiter().isSignaled()).isInstanceOf(DeviceLostException.class);
    }

    @Test
    void closeCancelsPendingWorkFailsItsPointsAndRefusesMore() {
        SyncPoint pending = queue.submit(Duration.ofMillis(1));

        queue.close();
        clock.advanceTimeBy(Duration.ofMillis(5));

        assertThatThrownBy(() -> pending.waiter().isSignaled()).isInstanceOf(DeviceLostException.class)
                .hasMessageContaining("closed");
        assertThat(queue.completed()).as("the cancelled work never ended").isZero();
        assertThatThrownBy(() -> queue.submit(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aNegativeDurationIsRefused() {
        assertThatThrownBy(() -> queue.submit(Duration.ofNanos(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThat(queue.submitted()).isZero();
    }

    @Test
    void onARealSchedulerABlockedWaiterWakesWhenTheWorkEnds() {
        Scheduler single = Schedulers.newSingle("fake-gpu");
        try (FakeGpuQueue real = FakeGpuQueue.on(single)) {
            SyncPoint point = real.submit(Duration.ofMillis(20));
            point.waiter().await(Duration.ofSeconds(30)); // liveness bound, not a timing claim
            assertThat(real.completed()).isEqualTo(1);
        } finally {
            single.dispose();
        }
    }

    @Test
    void itemsEndingAtOnceOnSeveralThreadsAllComplete() {
        Scheduler parallel = Schedulers.newParallel("fake-gpu", 4);
        try (FakeGpuQueue real = FakeGpuQueue.on(parallel)) {
            List<SyncPoint> points = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) {
                points.add(real.submit(Duration.ZERO));
            }
            for (SyncPoint p : points) {
                p.waiter().await(Duration.ofSeconds(30));
            }
            assertThat(real.completed()).isEqualTo(2_000);
        } finally {
            parallel.dispose();
        }
    }
}
