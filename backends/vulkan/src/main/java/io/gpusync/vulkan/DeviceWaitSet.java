package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.Timeouts;
import io.gpusync.spi.WaitSet;
import io.gpusync.spi.WaitSetMember;

import java.lang.ref.Reference;
import java.time.Duration;
import java.util.List;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * The {@link WaitSet} of one {@code VkDevice}: {@link #awaitAny} is one {@code vkWaitSemaphores} with
 * {@code VK_SEMAPHORE_WAIT_ANY_BIT} over the members' (semaphore, value) pairs plus a private wake-up
 * timeline semaphore, which {@link #wakeUp()} signals with {@code vkSignalSemaphore}.
 *
 * <p><b>Wake-up protocol.</b> Only this object signals the wake-up semaphore, under {@code wakeLock}, so its
 * counter equals {@code signalled} and only ever increases (signalling a value ≤ the current one loses the
 * device on lavapipe). An {@code awaitAny} waits for {@code consumed + 1} and, when it returns, sets
 * {@code consumed = signalled} under the same lock: a {@code wakeUp} that happens between two
 * {@code awaitAny} calls leaves {@code signalled > consumed}, so the next one returns at once — it is never
 * lost; and every {@code wakeUp} counted as consumed happened-before the return of the {@code awaitAny}
 * that consumed it. While a wake-up is pending ({@code signalled > consumed}) further {@code wakeUp}s do
 * nothing, so repeated wake-ups cost one lock and no driver call.
 *
 * <p>The wake-up semaphore is created on first use (so devices without timeline semaphores can still use
 * fences) and destroyed with the device state. Members are pinned (their claims entered) for the duration
 * of the wait, so closing one mid-wait defers its destruction until {@code awaitAny} returns. Equality is
 * identity: there is one instance per {@code VkDevice}. Thread-safe.
 *
 * <p><b>Cost on lavapipe.</b> A {@code WAIT_ANY} over two or more timeline semaphores busy-polls in
 * Mesa 22.3, where a single-semaphore wait blocks (the wake-up semaphore makes every wait with a member a
 * multi-wait; figures in {@code benchmarks/RESULTS.md}) — most likely the common
 * {@code vk_sync} runtime's fallback for sync types that cannot wait on several objects at once. Drivers
 * backed by kernel sync objects block properly. Engines that serve lavapipe devices may prefer a blocking
 * thread per waiter ({@link io.gpusync.spi.BlockingWaiter}).
 */
final class DeviceWaitSet implements WaitSet {
    private final DeviceState state;
    private final Object wakeLock = new Object();
    private long wakeSemaphore;  // guarded by wakeLock; 0 until first use
    private long signalled;      // guarded by wakeLock: the wake-up semaphore's counter
    private long consumed;       // guarded by wakeLock
    private boolean destroyed;   // guarded by wakeLock

    DeviceWaitSet(DeviceState state) {
        this.state = state;
    }

    @Override
    public void awaitAny(List<? extends WaitSetMember> members, Duration slice) {
        Timeouts.requireValid(slice);
        NativeAnchor.Claim hold = state.anchor.claim(this); // the device (and wake-up semaphore) stay alive
        try {
            state.checkNotLost("WaitSet.awaitAny");
            long wake;
            long target;
            synchronized (wakeLock) {
                wake = wakeSemaphoreLocked();
                target = consumed + 1;
            }
            int n = members.size();
            long[] semaphores = new long[n + 1];
            long[] values = new long[n + 1];
            TimelineSemaphoreWaiter[] pinned = new TimelineSemaphoreWaiter[n];
            int pinnedCount = 0;
            try {
                for (int i = 0; i < n; i++) {
                    WaitSetMember m = members.get(i);
                    if (!(m instanceof TimelineSemaphoreWaiter w) || w.state != state) {
                        throw new SyncInvalidArgumentException(BackendKind.VULKAN, m + " is not a timeline waiter of "
                                + state + ", so it cannot join its wait set");
                    }
                    if (!w.tryPin()) {
                        return; // closed member: return at once, the caller's probe reports it
                    }
                    pinned[pinnedCount++] = w;
                    semaphores[i] = w.semaphore;
                    values[i] = w.value;
                }
                semaphores[n] = wake;
                values[n] = target;
                int r = state.fns.waitSemaphores(semaphores, values, n + 1, true,
                        Timeouts.toNanos(slice, DeviceFunctions.INFINITE));
                if (r != VkResults.SUCCESS && r != VkResults.TIMEOUT) {
                    throw state.failure(r, "vkWaitSemaphores(WAIT_ANY over " + n + " members + wake-up VkSemaphore "
                            + hex(wake) + " ≥ " + Long.toUnsignedString(target) + ") on " + state);
                }
            } finally {
                for (int i = 0; i < pinnedCount; i++) {
                    pinned[i].unpin();
                }
            }
            synchronized (wakeLock) {
                consumed = signalled;
            }
        } finally {
            hold.close();
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public void wakeUp() {
        synchronized (wakeLock) {
            if (destroyed || signalled != consumed) {
                return; // device released, or a wake-up is already pending
            }
            long wake = wakeSemaphoreLocked();
            long next = signalled + 1;
            int r = state.fns.signalSemaphore(wake, next);
            if (r != VkResults.SUCCESS) {
                throw state.failure(r, "vkSignalSemaphore(wake-up VkSemaphore " + hex(wake) + ", "
                        + Long.toUnsignedString(next) + ") on " + state);
            }
            signalled = next;
        }
    }

    /** Closed once the device's last hold has dropped (then no waiter of it is left to join). */
    @Override
    public boolean isClosed() {
        synchronized (wakeLock) {
            return destroyed;
        }
    }

    /** How many wake-ups have reached the driver (a test hook). */
    long wakeUpsSignalled() {
        synchronized (wakeLock) {
            return signalled;
        }
    }

    private long wakeSemaphoreLocked() {
        if (destroyed) {
            throw new IllegalStateException("the wait set of " + state + " has been released");
        }
        if (wakeSemaphore == 0) {
            wakeSemaphore = state.fns.createSemaphore(true, 0);
        }
        return wakeSemaphore;
    }

    /** Called once, when the device's last hold drops (no wait in progress). */
    void destroyWakeSemaphore() {
        synchronized (wakeLock) {
            destroyed = true;
            if (wakeSemaphore != 0) {
                state.fns.destroySemaphore(wakeSemaphore);
                wakeSemaphore = 0;
            }
        }
    }

    @Override
    public String toString() {
        return "DeviceWaitSet[" + state + "]";
    }
}
