package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.Deadline;
import io.gpusync.spi.NativeAnchor;
import io.gpusync.spi.Timeouts;
import io.gpusync.spi.WaitSet;
import io.gpusync.spi.WaitSetMember;

import java.lang.ref.Reference;
import java.time.Duration;
import java.util.Optional;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * The waiter of a timeline {@code VkSemaphore} at a value (unsigned).
 *
 * <p>{@link #await} parks in the driver in {@code vkWaitSemaphores} ({@link io.gpusync.SyncPoint#FOREVER} →
 * {@code UINT64_MAX}; a driver that returns {@code VK_TIMEOUT} early is waited on again for the rest, so a
 * timeout is never reported early); {@link #isSignaled()} reads the counter with
 * {@code vkGetSemaphoreCounterValue} and compares unsigned. It is a {@link WaitSetMember} of its device's
 * wait set. Device loss is sticky: once any call on the device reported {@code VK_ERROR_DEVICE_LOST},
 * every wait and probe throws {@link io.gpusync.DeviceLostException}, never {@code false}.
 *
 * <p>Thread-safe; a native wait cannot be interrupted (wait in slices to cancel).
 */
final class TimelineSemaphoreWaiter extends AnchoredWaiter implements BlockingWaiter, WaitSetMember {
    final long semaphore;
    final long value;

    TimelineSemaphoreWaiter(VulkanDevice view, long semaphore, long value, NativeAnchor anchor) {
        super(view, anchor);
        this.semaphore = semaphore;
        this.value = value;
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        pin();
        try {
            state.checkNotLost(describe());
            Deadline deadline = Deadline.after(timeout);
            long nanos = Timeouts.toNanos(timeout, DeviceFunctions.INFINITE);
            while (true) {
                int r = state.fns.waitSemaphore(semaphore, value, nanos);
                if (r == VkResults.SUCCESS) {
                    return;
                }
                if (r != VkResults.TIMEOUT) {
                    throw state.failure(r, "vkWaitSemaphores(" + describe() + ")");
                }
                long left = deadline.remainingNanos();
                if (left == 0) {
                    throw new SyncTimeoutException(BackendKind.VULKAN, describe() + " not reached within "
                            + Timeouts.describe(timeout) + " (vkWaitSemaphores returned VK_TIMEOUT)");
                }
                nanos = left; // the driver returned early: wait for the rest, never report early
            }
        } finally {
            unpin();
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public boolean isSignaled() {
        pin();
        try {
            state.checkNotLost(describe());
            long[] current = new long[1];
            int r = state.fns.counterValue(semaphore, current);
            if (r != VkResults.SUCCESS) {
                throw state.failure(r, "vkGetSemaphoreCounterValue(" + describe() + ")");
            }
            return Long.compareUnsigned(current[0], value) >= 0;
        } finally {
            unpin();
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public Optional<SyncWaiter> rebindToValue(long newValue) {
        requireOpen();
        return Optional.of(new TimelineSemaphoreWaiter(view, semaphore, newValue, anchor()));
    }

    @Override
    public WaitSet waitSet() {
        return state.waitSet;
    }

    private String describe() {
        return "timeline VkSemaphore " + hex(semaphore) + " ≥ " + Long.toUnsignedString(value) + " on " + state;
    }

    @Override
    public String toString() {
        return "VulkanTimelineWaiter[" + describe() + "]";
    }
}
