package io.gpusync.vulkan;

import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.spi.WakeableWaiter;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.gpusync.vulkan.Lavapipe.onPlatformThread;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link WakeableWaiter#wakeWaiters()} on a timeline-semaphore waiter, on a real lavapipe device: a thread
 * blocked in the wakeable {@code await(timeout, abandoned)} (the engine's form) leaves
 * {@code vkWaitSemaphores} through the device's companion semaphore and throws {@link SyncTimeoutException};
 * the point is untouched, and a thread blocked on another waiter of the device waits on. The waits here are 60 s long, so a thread back within 10 s was woken.
 */
class VulkanWakeTest extends OnLavapipe {
    private static final Duration LONG = Duration.ofSeconds(60);

    @Test
    void aTimelineSemaphoreWaiterIsWakeable() {
        SyncPoint.Vulkan p = device.createTimelineSemaphore(0);
        try {
            assertThat(p.withValue(1).waiter()).isInstanceOf(WakeableWaiter.class);
        } finally {
            p.waiter().close();
        }
    }

    @Test
    void aWakeEndsABlockedAwaitWithATimeoutAndLeavesThePointAsItWas() throws Exception {
        SyncPoint.Vulkan p0 = device.createTimelineSemaphore(0);
        TimelineSemaphoreWaiter waiter = (TimelineSemaphoreWaiter) p0.withValue(1).waiter();
        try {
            CompletableFuture<Void> waiting = onPlatformThread(() -> waiter.await(LONG, () -> false));
            awaitBlocked(waiter, 1);

            waiter.wakeWaiters();

            assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(SyncTimeoutException.class);
            assertThat(waiter.state.wakeSemaphore.entered()).isZero();
            assertThat(waiter.isSignaled()).isFalse();
            assertThat(device.counterValue(p0.semaphore())).isZero();
        } finally {
            waiter.close();
            p0.waiter().close();
        }
    }

    @Test
    void aWakeOfAnotherWaiterOfTheDeviceLeavesThisAwaitBlocked() throws Exception {
        SyncPoint.Vulkan a0 = device.createTimelineSemaphore(0);
        SyncPoint.Vulkan b0 = device.createTimelineSemaphore(0);
        TimelineSemaphoreWaiter a = (TimelineSemaphoreWaiter) a0.withValue(1).waiter();
        TimelineSemaphoreWaiter b = (TimelineSemaphoreWaiter) b0.withValue(1).waiter();
        try {
            CompletableFuture<Void> waitingA = onPlatformThread(() -> a.await(LONG, () -> false));
            CompletableFuture<Void> waitingB = onPlatformThread(() -> b.await(LONG, () -> false));
            awaitBlocked(a, 2);

            b.wakeWaiters();

            assertThatThrownBy(() -> waitingB.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(SyncTimeoutException.class);
            awaitBlocked(a, 1); // a is blocked again, on the companion's next value
            assertThat(waitingA).isNotDone();
            device.hostSignal(a0.semaphore(), 1);
            waitingA.get(10, TimeUnit.SECONDS);
            assertThat(a.isSignaled()).isTrue();
        } finally {
            a.close();
            b.close();
            a0.waiter().close();
            b0.waiter().close();
        }
    }

    @Test
    void aWakeWithNoThreadBlockedOrOnAClosedWaiterChangesNothing() {
        SyncPoint.Vulkan p0 = device.createTimelineSemaphore(0);
        TimelineSemaphoreWaiter waiter = (TimelineSemaphoreWaiter) p0.withValue(1).waiter();
        try {
            waiter.wakeWaiters();
            assertThatThrownBy(() -> waiter.await(Duration.ofMillis(50), () -> false))
                    .isInstanceOf(SyncTimeoutException.class);
            device.hostSignal(p0.semaphore(), 1);
            waiter.await(Duration.ofMillis(50));
        } finally {
            waiter.close();
            p0.waiter().close();
        }
        waiter.wakeWaiters(); // closed: does nothing, throws nothing
    }

    @Test
    void anAwaitAbandonedOnItsWayInEndsAtOnceUnlessThePointIsSignalled() {
        SyncPoint.Vulkan p0 = device.createTimelineSemaphore(0);
        TimelineSemaphoreWaiter waiter = (TimelineSemaphoreWaiter) p0.withValue(1).waiter();
        try {
            assertThatThrownBy(() -> waiter.await(LONG, () -> true)).isInstanceOf(SyncTimeoutException.class);
            assertThat(waiter.state.wakeSemaphore.entered()).isZero();
            device.hostSignal(p0.semaphore(), 1);
            waiter.await(LONG, () -> true); // signalled: returns normally
        } finally {
            waiter.close();
            p0.waiter().close();
        }
    }

    /** Waits until {@code n} threads are counted in the device's wake semaphore (reached by the next wake). */
    private static void awaitBlocked(TimelineSemaphoreWaiter w, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (w.state.wakeSemaphore.entered() != n) {
            assertThat(System.nanoTime() - deadline).as(n + " threads blocked within 10 s").isNegative();
            Thread.sleep(1);
        }
    }
}
