package io.gpusync.vulkan;

import io.gpusync.SyncPoint;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import io.gpusync.test.vulkan.VulkanContext;

import static io.gpusync.vulkan.Lavapipe.onPlatformThread;
import static io.gpusync.vulkan.Lavapipe.settle;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Who destroys what, and when: owned vs borrowed handles, deferred release, forgotten waiters, devices. */
class VulkanLifetimeTest extends OnLavapipe {
    private static long destroyed() {
        return device.state.fns.semaphoresDestroyed.get();
    }

    @Test
    void closeDuringAWaitDefersTheReleaseUntilTheWaitReturnsAndDestroysTheSemaphoreOnce() throws Exception {
        SyncPoint.Vulkan p0 = device.createTimelineSemaphore(0);
        SyncPoint p1 = p0.withValue(1);
        TimelineSemaphoreWaiter w = (TimelineSemaphoreWaiter) p1.waiter();
        long before = destroyed();
        CompletableFuture<Void> waiting = onPlatformThread(() -> p1.await(SyncPoint.FOREVER));
        settle();
        p0.waiter().close();
        p1.waiter().close();
        assertThat(w.anchor().isReleased()).isFalse();
        assertThat(destroyed()).isEqualTo(before);
        assertThat(waiting).isNotDone();

        device.hostSignal(p0.semaphore(), 1); // still alive: the wait in progress pins it
        waiting.get(5, TimeUnit.SECONDS);
        assertThat(w.anchor().isReleased()).isTrue();
        w.anchor().whenReleased().toCompletableFuture().orTimeout(5, java.util.concurrent.TimeUnit.SECONDS).join(); // the destroy runs on housekeeping
        assertThat(destroyed()).isEqualTo(before + 1);

        p1.waiter().close();
        p0.waiter().close();
        assertThat(destroyed()).isEqualTo(before + 1);
        assertThatThrownBy(() -> p1.await(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(p1::isSignaled).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> p1.withValue(2)).isInstanceOf(IllegalStateException.class);
    }

    /**
     * A host signal through gpusync holds an adopted semaphore for its whole call: the wait it ends may close the
     * last waiter at once (here the woken thread does), and the semaphore is then destroyed exactly once, by
     * whichever of the two threads lets go last — never under {@code vkSignalSemaphore}.
     */
    @Test
    void aSignalAndTheCloseOfTheLastWaiterItWokeDestroyTheSemaphoreOnceAfterTheCall() throws Exception {
        long before = destroyed();
        int rounds = 200;
        for (int round = 0; round < rounds; round++) {
            SyncPoint.Vulkan p0 = device.createTimelineSemaphore(0);
            SyncPoint p1 = p0.withValue(1);
            CompletableFuture<Void> waiting = onPlatformThread(() -> {
                p1.await(SyncPoint.FOREVER);
                p0.waiter().close(); // the woken thread drops the last holds at once
                p1.waiter().close();
            });
            if (round % 4 == 0) {
                settle();
            }
            device.hostSignal(p0.semaphore(), 1);
            waiting.get(5, TimeUnit.SECONDS);
            p1.waiter().whenReleased().toCompletableFuture().get(5, TimeUnit.SECONDS);
        }
        assertThat(destroyed()).isEqualTo(before + rounds);
    }

    @Test
    void anAdoptedSemaphoreIsDestroyedExactlyOnceWhenItsLastReboundWaiterCloses() {
        long raw = device.state.fns.createSemaphore(true, 0);
        long before = destroyed();
        SyncPoint.Vulkan p = device.adoptTimelineSemaphore(raw, 0);
        SyncPoint q = p.withValue(3);
        p.waiter().close();
        assertThat(destroyed()).isEqualTo(before);
        assertThat(q.isSignaled()).isFalse(); // still usable through the rebound waiter
        q.waiter().close();
        ((TimelineSemaphoreWaiter) q.waiter()).anchor().whenReleased().toCompletableFuture().orTimeout(5, java.util.concurrent.TimeUnit.SECONDS).join(); // the destroy runs on housekeeping
        assertThat(destroyed()).isEqualTo(before + 1);
        q.waiter().close();
        p.waiter().close();
        assertThat(destroyed()).isEqualTo(before + 1);
    }

    /**
     * Measured on the H200 (NVIDIA 580.159.04, soak at 23432c9): a user's {@code close()} of the last waiter sat in
     * {@code vkDestroySemaphore} for the rest of the run, behind a driver-wide lock. The destroy may block, so it never
     * runs on the closing thread.
     */
    @Test
    void theLastCloseDestroysTheSemaphoreOffTheClosingThread() {
        SyncPoint.Vulkan p = device.createTimelineSemaphore(0);
        TimelineSemaphoreWaiter w = (TimelineSemaphoreWaiter) p.waiter();
        long before = destroyed();
        java.util.concurrent.atomic.AtomicReference<Thread> destroyedOn = new java.util.concurrent.atomic.AtomicReference<>();
        CompletableFuture<Void> released = w.anchor().whenReleased()
                .thenRun(() -> destroyedOn.set(Thread.currentThread())).toCompletableFuture();
        w.close();
        released.orTimeout(5, TimeUnit.SECONDS).join();
        assertThat(destroyed()).isEqualTo(before + 1);
        assertThat(destroyedOn.get()).as("the thread that ran the destroy").isNotSameAs(Thread.currentThread());
    }

    @Test
    void aBorrowedSemaphoreIsNeverDestroyed() {
        long raw = device.state.fns.createSemaphore(true, 0);
        long before = destroyed();
        SyncPoint.Vulkan p = device.borrowTimelineSemaphore(raw, 2);
        SyncPoint q = p.withValue(4);
        assertThat(((TimelineSemaphoreWaiter) p.waiter()).anchor().isAdopted()).isFalse();
        p.waiter().close();
        q.waiter().close();
        assertThat(destroyed()).isEqualTo(before);
        device.hostSignal(raw, 4); // still a live semaphore, the caller's to use and destroy
        assertThat(device.counterValue(raw)).isEqualTo(4);
        device.state.fns.destroySemaphore(raw);
    }

    @Test
    void aForgottenWaiterReleasesItsSemaphoreWhenItBecomesUnreachable() throws Exception {
        long before = destroyed();
        forgetAPoint();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (destroyed() == before && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(20);
        }
        assertThat(destroyed()).isEqualTo(before + 1);
    }

    private static void forgetAPoint() {
        SyncPoint.Vulkan p = device.createTimelineSemaphore(0);
        assertThat(p.withValue(1).isSignaled()).isFalse();
    }

    @Test
    void aContextClosedWhileWaitersLiveKeepsItsDeviceUntilTheLastWaiterCloses() throws Exception {
        VulkanContext own = Lavapipe.context();
        VulkanDevice d = own.device();
        SyncPoint.Vulkan p = d.createTimelineSemaphore(0);
        SyncPoint p1 = p.withValue(1);
        own.close();
        own.close();
        assertThat(DeviceState.isLive(d.handle())).isTrue();
        assertThatThrownBy(() -> d.createTimelineSemaphore(0)).isInstanceOf(IllegalStateException.class);

        CompletableFuture<Void> waiting = onPlatformThread(() -> p1.await(SyncPoint.FOREVER));
        settle();
        p.waiter().close();
        p1.waiter().close();
        assertThat(DeviceState.isLive(d.handle())).isTrue(); // a wait is in progress on it
        d.state.fns.signalSemaphore(p.semaphore(), 1);
        waiting.get(5, TimeUnit.SECONDS);
        // the wait's end let go of the last hold; the destroys run on the housekeeping thread, never the waiter's
        d.state.anchor.whenReleased().toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThat(DeviceState.isLive(d.handle())).isFalse(); // semaphore, wake-up semaphore, device, instance gone
        assertThat(d.state.anchor.isReleased()).isTrue();
    }

    @Test
    void aClosedViewRefusesToMintWhileOtherViewsOfTheDeviceStillWork() {
        VulkanDevice view = VulkanDevice.wrap(0L, device.handle().address());
        assertThat(view.waitSet()).isSameAs(device.waitSet());
        view.close();
        view.close();
        assertThatThrownBy(() -> view.createFence(false)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> view.borrowTimelineSemaphore(1, 1)).isInstanceOf(IllegalStateException.class);
        try (VulkanFenceWaiter f = (VulkanFenceWaiter) device.createFence(true)) {
            assertThat(f.isSignaled()).isTrue();
        }
    }

    @Test
    void aWrapAfterEveryViewOfAnAddressClosedStartsAFreshStateEvenWhileAnOldWaiterLives() {
        // The application wraps its device, closes the view, forgets a waiter (not yet collected), destroys
        // the device and creates another at the same address: the new wrap must not inherit the old state
        // (its entry points, wait set with a wake-up semaphore of the dead device, "lost" flag).
        VulkanContext own = Lavapipe.context();
        long address = own.device().handle().address();
        VulkanFenceWaiter forgotten = (VulkanFenceWaiter) own.device().createFence(false);
        DeviceState old = own.device().state;
        own.close(); // the last view of the address: only the forgotten waiter holds the old state now
        assertThat(DeviceState.isLive(own.device().handle())).isTrue();

        VulkanDevice again = VulkanDevice.wrap(0L, address);
        try {
            assertThat(again.state).isNotSameAs(old);
            assertThat(again.waitSet()).isNotSameAs(old.waitSet);
            try (VulkanDevice third = VulkanDevice.wrap(0L, address)) {
                assertThat(third.state).as("views opened together share").isSameAs(again.state);
            }
        } finally {
            again.close();
            forgotten.close(); // the old state's last hold: its device and instance are destroyed
        }
        // the fence's destroy, and with it the drop of its hold on the old state, runs on the housekeeping thread
        old.anchor.whenReleased().toCompletableFuture().orTimeout(5, TimeUnit.SECONDS).join();
        assertThat(old.anchor.isReleased()).isTrue();
    }
}
