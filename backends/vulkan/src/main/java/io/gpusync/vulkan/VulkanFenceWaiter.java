package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncTimeoutException;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.Timeouts;

import java.time.Duration;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * The waiter of a {@code VkFence} — also the CPU side of a binary-semaphore point whose producer signals a
 * fence in the same submission ({@link VulkanDevice#adoptBinarySemaphore(long, long)}).
 *
 * <p><b>Blocking.</b> {@link #await} parks in {@code vkWaitForFences} in slices of at most 50 ms through
 * {@link io.gpusync.kit.WaitLoop} (an early {@code VK_TIMEOUT} is waited on again for the rest, so a timeout is never
 * reported early; {@link io.gpusync.SyncPoint#FOREVER} loops until signalled). {@link #isSignaled()} is {@code vkGetFenceStatus}: {@code VK_NOT_READY} → {@code false},
 * {@code VK_ERROR_DEVICE_LOST} → {@link io.gpusync.DeviceLostException}. A fence that the producer resets
 * reads unsignalled again: gpusync never resets it.
 *
 * <p><b>Threading.</b> Thread-safe: any number of threads may wait and probe (Vulkan allows concurrent
 * waits on a fence). <b>Cancellation:</b> an interrupt ends a wait within one slice with
 * {@link io.gpusync.SyncCancelledException}, the interrupt flag kept set.
 *
 * <p><b>Lifetime.</b> As every {@link io.gpusync.SyncWaiter}: an adopted fence
 * (and companion semaphore) is destroyed once this waiter is closed (or unreachable) and no wait on it is
 * in progress; a borrowed one is never destroyed by gpusync.
 *
 * <p><b>Not wakeable</b> (no {@link io.gpusync.spi.WakeableWaiter}): {@code vkWaitForFences} waits on
 * fences only, and a fence cannot be signalled from the host, so no companion can end the wait early; an
 * engine's blocking thread on a cancelled wait is freed at the end of its slice.
 */
final class VulkanFenceWaiter extends AnchoredWaiter implements BlockingWaiter {
    private final long fence;

    VulkanFenceWaiter(VulkanDevice view, long fence, NativeAnchor anchor) {
        super(view, anchor);
        this.fence = fence;
    }

    /** The raw {@code VkFence} handle (for a producer's {@code vkQueueSubmit}). */
    public long fence() {
        return fence;
    }

    /** The device this fence belongs to. */
    public VulkanDevice device() {
        return view;
    }

    @Override
    public void await(Duration timeout) {
        awaitInSlices(timeout, nanos -> sliceResult(state.fns.waitForFence(fence, nanos), "vkWaitForFences(" + describe() + ")"),
                () -> new SyncTimeoutException(BackendKind.VULKAN, describe() + " not signalled within "
                        + Timeouts.describe(timeout) + " (vkWaitForFences returned VK_TIMEOUT)"));
    }

    @Override
    public boolean isSignaled() {
        return pinned(() -> {
            state.checkNotLost(describe());
            int r = state.fns.fenceStatus(fence);
            if (r == VkResults.SUCCESS) {
                return true;
            }
            if (r == VkResults.NOT_READY) {
                return false;
            }
            throw state.failure(r, "vkGetFenceStatus(" + describe() + ")");
        });
    }

    private String describe() {
        return "VkFence " + hex(fence) + " on " + state;
    }

    @Override
    public String toString() {
        return "VulkanFenceWaiter[" + describe() + "]";
    }
}
