package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.Timeouts;

import java.time.Duration;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * The waiter of a binary {@code VkSemaphore} point that has no companion fence: it anchors the semaphore's
 * lifetime so that consumers can stage a <em>GPU-side</em> wait on it, but it cannot wait from the CPU, and
 * says so: {@link #await} and {@link #isSignaled()} throw {@link SyncNotSupportedException}.
 *
 * <p><b>Why not submit a wait and a fence?</b> The host cannot wait on a binary semaphore; the textbook
 * workaround — a {@code vkQueueSubmit} that waits on it and signals a fence — is wrong for a library that
 * only holds the handle: (1) it <em>consumes</em> the signal, so the consumer the producer meant it for
 * would then wait forever (binary semaphores have exactly one waiter per signal); (2) Vulkan requires the
 * signal operation to have been <em>submitted</em> before a wait on a binary semaphore is submitted
 * (VUID-vkQueueSubmit-pWaitSemaphores-03238), which a waiter cannot know; (3) it needs a queue that the
 * application also submits to, and queues are externally synchronised; (4) it cannot probe without
 * consuming. So the CPU side of a binary point is the producer's job: signal a fence in the same submission
 * and mint the point with {@link VulkanDevice#adoptBinarySemaphore(long, long)}, or use a timeline
 * semaphore. Never probed with {@code vkGetSemaphoreCounterValue} (undefined for binary semaphores).
 *
 * <p>Thread-safe; never blocks.
 */
final class BinarySemaphoreWaiter extends AnchoredWaiter {
    private final long semaphore;

    BinarySemaphoreWaiter(VulkanDevice view, long semaphore, NativeAnchor anchor) {
        super(view, anchor);
        this.semaphore = semaphore;
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        throw unsupported();
    }

    @Override
    public boolean isSignaled() {
        throw unsupported();
    }

    private SyncNotSupportedException unsupported() {
        requireOpen();
        return new SyncNotSupportedException(BackendKind.VULKAN, "binary VkSemaphore " + hex(semaphore) + " on "
                + state + " cannot be waited on or probed from the CPU (a host wait would have to consume its "
                + "signal through a queue submit); have the producer signal a VkFence in the same vkQueueSubmit "
                + "and mint the point with VulkanDevice.adoptBinarySemaphore(semaphore, fence) or borrowBinarySemaphore(semaphore, fence), or use a "
                + "timeline semaphore");
    }

    @Override
    public String toString() {
        return "BinarySemaphoreWaiter[VkSemaphore " + hex(semaphore) + " on " + state + ", no CPU wait]";
    }
}
