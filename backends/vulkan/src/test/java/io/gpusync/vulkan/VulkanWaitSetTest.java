package io.gpusync.vulkan;

import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.spi.WaitSet;
import io.gpusync.spi.WaitSetMember;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import io.gpusync.test.vulkan.VulkanContext;

import static io.gpusync.vulkan.Lavapipe.onPlatformThread;
import static io.gpusync.vulkan.Lavapipe.settle;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The per-device wait-any {@link WaitSet} on a real lavapipe device. */
class VulkanWaitSetTest extends OnLavapipe {
    private static final Duration LONG_SLICE = Duration.ofSeconds(10);
    private static List<WaitSetMember> members(List<SyncPoint.Vulkan> points) {
        List<WaitSetMember> members = new ArrayList<>();
        for (SyncPoint.Vulkan p : points) {
            members.add((WaitSetMember) p.waiter());
        }
        return members;
    }

    private static List<SyncPoint.Vulkan> unsignalledPoints(int n) {
        List<SyncPoint.Vulkan> points = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            SyncPoint.Vulkan base = device.createTimelineSemaphore(0);
            points.add((SyncPoint.Vulkan) base.withValue(1));
            base.waiter().close(); // the rebound waiter keeps the semaphore alive
        }
        return points;
    }

    private static void closeAll(List<SyncPoint.Vulkan> points) {
        points.forEach(p -> p.waiter().close());
    }

    /** Drains any pending wake-up so that a test starts from a quiet wait set. */
    private static void drain(WaitSet ws) {
        ws.awaitAny(List.of(), Duration.ZERO);
    }

    @Test
    void awaitAnyReturnsWhenOneOfSeveralMembersIsSignalled() throws Exception {
        List<SyncPoint.Vulkan> points = unsignalledPoints(3);
        WaitSet ws = device.waitSet();
        drain(ws);
        try {
            CompletableFuture<Long> waited = onPlatformThread(() -> {
                long t0 = System.nanoTime();
                ws.awaitAny(members(points), LONG_SLICE);
                return System.nanoTime() - t0;
            });
            settle();
            assertThat(waited).isNotDone();
            device.hostSignal(points.get(1).semaphore(), 1);
            assertThat(waited.get(5, TimeUnit.SECONDS)).isLessThan(LONG_SLICE.toNanos());
            assertThat(points.get(1).isSignaled()).isTrue();
            assertThat(points.get(0).isSignaled()).isFalse();
        } finally {
            closeAll(points);
        }
    }

    @Test
    void aQueueSignalOfAMemberAlsoEndsTheWait() throws Exception {
        List<SyncPoint.Vulkan> points = unsignalledPoints(2);
        WaitSet ws = device.waitSet();
        drain(ws);
        try {
            CompletableFuture<Void> waited = onPlatformThread(() -> ws.awaitAny(members(points), LONG_SLICE));
            settle();
            ctx.signalOnQueue(points.get(0).semaphore(), 1);
            waited.get(5, TimeUnit.SECONDS);
        } finally {
            closeAll(points);
        }
    }

    @Test
    void wakeUpFromAnotherThreadPromptlyEndsABlockedAwaitAny() throws Exception {
        List<SyncPoint.Vulkan> points = unsignalledPoints(2);
        WaitSet ws = device.waitSet();
        drain(ws);
        try {
            CompletableFuture<Void> waited = onPlatformThread(() -> ws.awaitAny(members(points), LONG_SLICE));
            settle();
            assertThat(waited).isNotDone();
            long t0 = System.nanoTime();
            ws.wakeUp();
            waited.get(5, TimeUnit.SECONDS);
            assertThat(System.nanoTime() - t0).isLessThan(Duration.ofSeconds(1).toNanos());
            assertThat(points.get(0).isSignaled()).isFalse();
        } finally {
            closeAll(points);
        }
    }

    @Test
    void aWakeUpBetweenTwoAwaitAnyCallsIsNotLostAndIsConsumedOnce() {
        WaitSet ws = device.waitSet();
        drain(ws);
        ws.wakeUp(); // nobody is waiting yet
        long t0 = System.nanoTime();
        ws.awaitAny(List.of(), LONG_SLICE);
        assertThat(System.nanoTime() - t0).isLessThan(Duration.ofSeconds(1).toNanos());

        Duration slice = Duration.ofMillis(50);
        long t1 = System.nanoTime();
        ws.awaitAny(List.of(), slice); // consumed: this one runs its slice out
        assertThat(System.nanoTime() - t1).isGreaterThanOrEqualTo(slice.toNanos() / 2);
    }

    @Test
    void repeatedConcurrentWakeUpsAreSafeCoalesceAndNeverLoseTheDevice() throws Exception {
        List<SyncPoint.Vulkan> points = unsignalledPoints(1);
        DeviceWaitSet ws = (DeviceWaitSet) device.waitSet();
        drain(ws);
        long before = ws.wakeUpsSignalled();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong loops = new AtomicLong();
        try {
            CompletableFuture<Void> engine = onPlatformThread(() -> {
                while (!stop.get()) {
                    ws.awaitAny(members(points), Duration.ofMillis(5));
                    loops.incrementAndGet();
                }
            });
            int threads = 4;
            int perThread = 5_000;
            List<CompletableFuture<Void>> wakers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                wakers.add(onPlatformThread(() -> {
                    for (int i = 0; i < perThread; i++) {
                        ws.wakeUp();
                        if (i % 16 == 0) {
                            Thread.yield(); // let the engine consume some of them: interleave, not just coalesce
                        }
                    }
                }));
            }
            for (CompletableFuture<Void> w : wakers) {
                w.get(30, TimeUnit.SECONDS);
            }
            stop.set(true);
            ws.wakeUp();
            engine.get(5, TimeUnit.SECONDS);
            long signalled = ws.wakeUpsSignalled() - before;
            System.out.printf("[wait set] %d wakeUp() calls reached the driver %d times over %d awaitAny loops%n",
                    threads * perThread + 1, signalled, loops.get());
            assertThat(signalled).isBetween(1L, (long) threads * perThread + 1);
            assertThat(device.state.isLost()).isFalse();
            device.hostSignal(points.get(0).semaphore(), 1);
            assertThat(points.get(0).isSignaled()).isTrue();
        } finally {
            stop.set(true);
            closeAll(points);
        }
    }

    @Test
    void aSliceWithNothingSignalledEndsNormallyAndAnEmptySetWaitsOnTheWakeUpAlone() {
        List<SyncPoint.Vulkan> points = unsignalledPoints(2);
        WaitSet ws = device.waitSet();
        drain(ws);
        try {
            Duration slice = Duration.ofMillis(30);
            long t0 = System.nanoTime();
            ws.awaitAny(members(points), slice);
            ws.awaitAny(List.of(), slice);
            assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(slice.toNanos());
        } finally {
            closeAll(points);
        }
    }

    @Test
    void membersArePinnedDuringTheWaitSoClosingOneDefersItsDestruction() throws Exception {
        SyncPoint.Vulkan base = device.createTimelineSemaphore(0);
        SyncPoint.Vulkan p = (SyncPoint.Vulkan) base.withValue(1);
        base.waiter().close();
        TimelineSemaphoreWaiter member = (TimelineSemaphoreWaiter) p.waiter();
        WaitSet ws = device.waitSet();
        drain(ws);
        long destroyed = device.state.fns.semaphoresDestroyed.get();
        CompletableFuture<Void> waited = onPlatformThread(() -> ws.awaitAny(List.of(member), LONG_SLICE));
        settle();
        member.close();
        assertThat(member.anchor().isReleased()).isFalse();
        assertThat(device.state.fns.semaphoresDestroyed.get()).isEqualTo(destroyed);
        ws.wakeUp();
        waited.get(5, TimeUnit.SECONDS);
        assertThat(member.anchor().isReleased()).isTrue();
        member.anchor().whenReleased().toCompletableFuture().get(5, TimeUnit.SECONDS); // destroyed on housekeeping
        assertThat(device.state.fns.semaphoresDestroyed.get()).isEqualTo(destroyed + 1);

        // a closed member makes awaitAny return at once; the member's own probe then reports it
        long t0 = System.nanoTime();
        ws.awaitAny(List.of(member), LONG_SLICE);
        assertThat(System.nanoTime() - t0).isLessThan(Duration.ofSeconds(1).toNanos());
        assertThatThrownBy(member::isSignaled).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aTimelineWaiterOfAnotherDeviceCannotJoinTheWaitSet() {
        try (VulkanContext other = Lavapipe.context()) {
            SyncPoint.Vulkan foreign = other.device().createTimelineSemaphore(0);
            try {
                assertThat(other.device().waitSet()).isNotEqualTo(device.waitSet());
                assertThatThrownBy(() -> device.waitSet().awaitAny(List.of((WaitSetMember) foreign.waiter()),
                        Duration.ZERO)).isInstanceOf(SyncInvalidArgumentException.class)
                        .hasMessageContaining("cannot join");
            } finally {
                foreign.waiter().close();
            }
        }
    }
}
