package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.NativeAnchor;
import io.gpusync.spi.Timeouts;
import io.gpusync.spi.WaitSet;
import io.gpusync.spi.WaitSetMember;

import java.time.Duration;
import java.util.Optional;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * The waiter of a timeline {@code VkSemaphore} at a value (unsigned).
 *
 * <p>{@link #await} parks in the driver in {@code vkWaitSemaphores}, in slices of at most 50 ms through
 * {@link io.gpusync.spi.WaitLoop} (a driver that returns {@code VK_TIMEOUT} early is waited on again for the rest, so a
 * timeout is never reported early; {@link io.gpusync.SyncPoint#FOREVER} loops until signalled; an interrupt
 * ends the wait within a slice with {@link io.gpusync.SyncCancelledException}, the flag kept set); {@link #isSignaled()} reads the counter with
 * {@code vkGetSemaphoreCounterValue} and compares unsigned. It is a {@link WaitSetMember} of its device's
 * wait set. Device loss is sticky: once any call on the device reported {@code VK_ERROR_DEVICE_LOST},
 * every wait and probe throws {@link io.gpusync.DeviceLostException}, never {@code false}.
 *
 * <p>Thread-safe.
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
        awaitInSlices(timeout, nanos -> sliceResult(state.fns.waitSemaphore(semaphore, value, nanos), "vkWaitSemaphores(" + describe() + ")"),
                () -> new SyncTimeoutException(BackendKind.VULKAN, describe() + " not reached within "
                        + Timeouts.describe(timeout) + " (vkWaitSemaphores returned VK_TIMEOUT)"));
    }

    @Override
    public boolean isSignaled() {
        return pinned(() -> {
            state.checkNotLost(describe());
            long[] current = new long[1];
            int r = state.fns.counterValue(semaphore, current);
            if (r != VkResults.SUCCESS) {
                throw state.failure(r, "vkGetSemaphoreCounterValue(" + describe() + ")");
            }
            return Long.compareUnsigned(current[0], value) >= 0;
        });
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
        return "TimelineSemaphoreWaiter[" + describe() + "]";
    }
}
