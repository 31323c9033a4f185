package io.gpusync.vulkan;

import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.VulkanSemaphoreKind;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.WaitSetMember;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.gpusync.vulkan.Lavapipe.onPlatformThread;
import static io.gpusync.vulkan.Lavapipe.settle;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Fences and binary semaphores on a real lavapipe device. */
class VulkanFenceAndBinaryTest extends OnLavapipe {
    @Test
    void aQueueSignalledFenceCompletesAThreadBlockedInAwait() throws Exception {
        try (VulkanFenceWaiter fence = (VulkanFenceWaiter) device.createFence(false)) {
            assertThat(fence).isInstanceOf(BlockingWaiter.class).isNotInstanceOf(WaitSetMember.class);
            CompletableFuture<Void> waiting = onPlatformThread(() -> fence.await(SyncPoint.FOREVER));
            settle();
            assertThat(waiting).isNotDone();
            ctx.signalFenceOnQueue(fence.fence());
            waiting.get(5, TimeUnit.SECONDS);
            assertThat(fence.isSignaled()).isTrue();
        }
    }

    /**
     * A borrowed fence is in use until {@code whenReleased()} completes, not until the waiter is closed: a thread
     * still inside {@code vkWaitForFences} (a cancelled wait's pool thread finishing its slice) keeps it; the owner
     * destroys it only afterwards. (Destroying it at close was a use-after-free in lavapipe, found by the soak.)
     */
    @Test
    void aBorrowedFenceIsLetGoOnlyAfterTheWaitInsideTheDriverHasReturned() throws Exception {
        long raw = device.state.fns.createFence(false);
        VulkanFenceWaiter borrowed = (VulkanFenceWaiter) device.borrowFence(raw);
        CompletableFuture<Void> waiting = onPlatformThread(() -> {
            try {
                borrowed.await(Duration.ofMillis(300));
            } catch (SyncTimeoutException expected) {
                // the slice ended unsignalled
            }
        });
        settle();
        CompletableFuture<Void> letGo = borrowed.whenReleased().toCompletableFuture();
        borrowed.close();
        assertThat(waiting).isNotDone();
        assertThat(letGo).as("a thread is still inside vkWaitForFences on it").isNotDone();
        waiting.get(5, TimeUnit.SECONDS);
        letGo.get(5, TimeUnit.SECONDS);
        device.state.fns.destroyFence(raw); // the owner's destroy, now safe
    }

    @Test
    void aFenceProbeReadsNotReadyAsFalse() {
        try (VulkanFenceWaiter unsignalled = (VulkanFenceWaiter) device.createFence(false);
             VulkanFenceWaiter signalled = (VulkanFenceWaiter) device.createFence(true)) {
            assertThat(unsignalled.isSignaled()).isFalse();
            assertThat(signalled.isSignaled()).isTrue();
            signalled.await(Duration.ZERO);
            assertThat(unsignalled.rebindToValue(3)).isEmpty();
        }
    }

    @Test
    void aFenceWaitTimesOutNoEarlierThanItsTimeoutAndNamesTheFence() {
        try (VulkanFenceWaiter fence = (VulkanFenceWaiter) device.createFence(false)) {
            Duration timeout = Duration.ofMillis(80);
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> fence.await(timeout)).isInstanceOf(SyncTimeoutException.class)
                    .hasMessageContaining("VkFence 0x" + Long.toHexString(fence.fence()))
                    .hasMessageContaining("0.08s");
            assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(timeout.toNanos());
            assertThatThrownBy(() -> fence.await(Duration.ZERO)).isInstanceOf(SyncTimeoutException.class);
        }
    }

    @Test
    void aBorrowedFenceIsNeverDestroyedAndAnOwnedOneExactlyOnce() {
        long raw = device.state.fns.createFence(true);
        long destroyed = device.state.fns.fencesDestroyed.get();
        VulkanFenceWaiter borrowed = (VulkanFenceWaiter) device.borrowFence(raw);
        assertThat(borrowed.isSignaled()).isTrue();
        borrowed.close();
        borrowed.close();
        assertThat(device.state.fns.fencesDestroyed.get()).isEqualTo(destroyed);
        assertThat(device.state.fns.fenceStatus(raw)).isEqualTo(VkResults.SUCCESS); // still alive: ours to destroy

        VulkanFenceWaiter adopted = (VulkanFenceWaiter) device.adoptFence(raw);
        adopted.close();
        adopted.close();
        adopted.anchor().whenReleased().toCompletableFuture().orTimeout(5, java.util.concurrent.TimeUnit.SECONDS).join(); // the destroy runs on housekeeping
        assertThat(device.state.fns.fencesDestroyed.get()).isEqualTo(destroyed + 1);
        assertThatThrownBy(() -> adopted.await(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aBinaryPointWithACompanionFenceIsWaitedOnThroughTheFence() throws Exception {
        long semaphore = device.state.fns.createSemaphore(false, 0);
        long fence = device.state.fns.createFence(false);
        long semsBefore = device.state.fns.semaphoresDestroyed.get();
        long fencesBefore = device.state.fns.fencesDestroyed.get();
        SyncPoint.Vulkan p = device.adoptBinarySemaphore(semaphore, fence);
        assertThat(p.kind()).isEqualTo(VulkanSemaphoreKind.BINARY);
        assertThat(p.semaphore()).isEqualTo(semaphore);
        assertThat(p.waiter()).isInstanceOf(VulkanFenceWaiter.class);
        assertThat(p.isSignaled()).isFalse();
        CompletableFuture<Void> waiting = onPlatformThread(() -> p.await(SyncPoint.FOREVER));
        settle();
        ctx.signalBinaryOnQueue(semaphore, fence);
        waiting.get(5, TimeUnit.SECONDS);
        assertThat(p.isSignaled()).isTrue();
        assertThatThrownBy(() -> p.withValue(2)).isInstanceOf(SyncInvalidArgumentException.class);
        ctx.device().state.check(ctx.device().state.fns.deviceWaitIdle(), "vkDeviceWaitIdle");
        p.waiter().close();
        // the destroy may run on the housekeeping thread: it has happened once gpusync has let go
        p.waiter().whenReleased().toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThat(device.state.fns.semaphoresDestroyed.get()).isEqualTo(semsBefore + 1);
        assertThat(device.state.fns.fencesDestroyed.get()).isEqualTo(fencesBefore + 1);
    }

    @Test
    void aBinaryPointWithoutAFenceRefusesCpuWaitsWithAnExplanationAndNeverProbesTheCounter() {
        long semaphore = device.state.fns.createSemaphore(false, 0);
        SyncPoint.Vulkan p = device.adoptBinarySemaphore(semaphore);
        try {
            assertThat(p.waiter()).isNotInstanceOf(BlockingWaiter.class).isNotInstanceOf(WaitSetMember.class);
            assertThatThrownBy(() -> p.await(Duration.ofSeconds(1))).isInstanceOf(SyncNotSupportedException.class)
                    .hasMessageContaining("binary VkSemaphore 0x" + Long.toHexString(semaphore))
                    .hasMessageContaining("adoptBinarySemaphore(semaphore, fence)");
            assertThatThrownBy(p::isSignaled).isInstanceOf(SyncNotSupportedException.class);
            assertThat(p.waiter().rebindToValue(1)).isEmpty();
        } finally {
            p.waiter().close();
        }
        assertThatThrownBy(p::isSignaled).isInstanceOf(IllegalStateException.class);
    }
}
