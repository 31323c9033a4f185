package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.Timeouts;
import io.gpusync.kit.WaitLoop;
import io.gpusync.spi.WaitSet;
import io.gpusync.spi.WaitSetMember;
import io.gpusync.spi.WakeableWaiter;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * The waiter of a timeline {@code VkSemaphore} at a value (unsigned).
 *
 * <p>{@link #await} parks in the driver in {@code vkWaitSemaphores}, in slices of at most 50 ms through
 * {@link io.gpusync.kit.WaitLoop} (a driver that returns {@code VK_TIMEOUT} early is waited on again for the rest, so a
 * timeout is never reported early; {@link io.gpusync.SyncPoint#FOREVER} loops until signalled; an interrupt
 * ends the wait within a slice with {@link io.gpusync.SyncCancelledException}, the flag kept set); {@link #isSignaled()} reads the counter with
 * {@code vkGetSemaphoreCounterValue} and compares unsigned. It is a {@link WaitSetMember} of its device's
 * wait set. Device loss is sticky: once any call on the device reported {@code VK_ERROR_DEVICE_LOST},
 * every wait and probe throws {@link io.gpusync.DeviceLostException}, never {@code false}.
 *
 * <p><b>Wakeable, in the engine's form only.</b> {@link #await(Duration, BooleanSupplier)} waits in each slice
 * with {@code VK_SEMAPHORE_WAIT_ANY_BIT} on the point and on its device's {@link WakeSemaphore} (a companion
 * timeline semaphore); {@link #wakeWaiters()} signals the companion from the host, so every thread then
 * blocked in that form on this device's timeline waiters leaves the driver: those of this waiter throw
 * {@link SyncTimeoutException}, the others wait again (on the companion's next value). The plain
 * {@link #await(Duration)} stays a one-semaphore wait that no wake reaches: a two-semaphore wait-any costs
 * CPU on lavapipe (Mesa 22.3 busy-polls it, see {@link DeviceWaitSet}), a cost only an engine that needs the
 * wake should pay.
 * Drivers backed by kernel sync objects block in both.
 *
 * <p>Thread-safe.
 */
final class TimelineSemaphoreWaiter extends AnchoredWaiter implements WakeableWaiter, WaitSetMember {
    final long semaphore;
    final long value;
    /** How many times {@link #wakeWaiters()} was called: an {@code await} ends once it changes. */
    private final AtomicLong wakes = new AtomicLong();

    TimelineSemaphoreWaiter(VulkanDevice view, long semaphore, long value, NativeAnchor anchor) {
        super(view, anchor);
        this.semaphore = semaphore;
        this.value = value;
    }

    @Override
    public void await(Duration timeout) {
        awaitInSlices(timeout, nanos -> sliceResult(state.fns.waitSemaphore(semaphore, value, nanos),
                "vkWaitSemaphores(" + describe() + ")"), () -> new SyncTimeoutException(BackendKind.VULKAN, describe()
                + " not reached within " + Timeouts.describe(timeout) + " (vkWaitSemaphores returned VK_TIMEOUT)"));
    }

    /**
     * {@link #await(Duration)} that {@link #wakeWaiters()} reaches (through the device's wake semaphore) and
     * that also ends once {@code abandoned} holds; see {@link WakeableWaiter}.
     */
    @Override
    public void await(Duration timeout, BooleanSupplier abandoned) {
        Timeouts.requireValid(timeout);
        Supplier<SyncTimeoutException> timedOut = () -> new SyncTimeoutException(BackendKind.VULKAN,
                describe() + " not reached within " + Timeouts.describe(timeout) + " (vkWaitSemaphores returned "
                        + "VK_TIMEOUT, or the wait was woken)");
        if (timeout.isZero()) {
            awaitInSlices(timeout, nanos -> probe(), timedOut);
            return;
        }
        pinned(() -> {
            state.checkNotLost(describe());
            long seen = wakes.get();
            WakeSemaphore wake = state.wakeSemaphore;
            WakeSemaphore.Entry[] entry = {wake.enter()};
            try {
                boolean abandonedAtEntry = abandoned.getAsBoolean(); // counted in first: a later wake reaches us
                long[] semaphores = {semaphore, entry[0].semaphore()};
                long[] values = {value, entry[0].value()};
                WaitLoop.await(timeout, WaitLoop.INTERRUPT_CHECK_NANOS, nanos -> {
                    if (abandonedAtEntry || wakes.get() != seen) {
                        return probe(); // woken or abandoned before this slice: no driver wait
                    }
                    int r = state.fns.waitSemaphores(semaphores, values, 2, true, nanos);
                    if (!sliceResult(r, "vkWaitSemaphores(" + describe() + " or the wake VkSemaphore)")) {
                        return false;
                    }
                    if (probe()) {
                        return true;
                    }
                    if (wake.woke(entry[0])) { // a wake of this device: wait for the next one from now on
                        wake.exit();
                        entry[0] = wake.enter();
                        values[1] = entry[0].value();
                    }
                    return false;
                }, () -> abandonedAtEntry || wakes.get() != seen, this, timedOut);
            } finally {
                wake.exit();
            }
            return null;
        });
    }

    /**
     * Wakes every thread now blocked in this waiter's {@link #await(Duration, BooleanSupplier)}: counts a wake on this waiter, then
     * signals the device's {@link WakeSemaphore} (threads blocked on other waiters of the device wake too and
     * wait again); see {@link WakeableWaiter#wakeWaiters()}. Does nothing once this waiter is closed and no
     * wait holds the device.
     */
    @Override
    public void wakeWaiters() {
        if (!tryPin()) {
            return;
        }
        try {
            wakes.incrementAndGet();
            state.wakeSemaphore.wake();
        } finally {
            unpin();
        }
    }

    @Override
    public boolean isSignaled() {
        return pinned(this::probe);
    }

    /** Reads the counter; the caller holds the device and the semaphore. */
    private boolean probe() {
        state.checkNotLost(describe());
        long[] current = new long[1];
        int r = state.fns.counterValue(semaphore, current);
        if (r != VkResults.SUCCESS) {
            throw state.failure(r, "vkGetSemaphoreCounterValue(" + describe() + ")");
        }
        return Long.compareUnsigned(current[0], value) >= 0;
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
