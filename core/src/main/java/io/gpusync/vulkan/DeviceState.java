package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncException;
import io.gpusync.spi.NativeAnchor;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * What gpusync keeps per {@code VkDevice}, shared by every {@link VulkanDevice} view and every waiter of
 * that device: the resolved entry points, the device's {@link DeviceWaitSet}, a sticky "device lost"
 * flag, and the device's lifetime {@link NativeAnchor}.
 *
 * <p>The anchor is held by every open {@link VulkanDevice} view, every waiter, every owned handle (until
 * it is destroyed) and every wait in progress. When the last hold drops, the wait set's wake-up semaphore
 * is destroyed and then, for a device gpusync created ({@link VulkanContext}), the device itself.
 *
 * <p>One state per device address: {@link #acquire} returns the live state of an address if there is one.
 * Thread-safe.
 */
final class DeviceState {
    private static final Map<Long, DeviceState> LIVE = new HashMap<>(); // guarded by LIVE

    final DeviceFunctions fns;
    final NativeAnchor anchor;
    final DeviceWaitSet waitSet;
    private final String description;
    private volatile boolean lost;

    private DeviceState(DeviceFunctions fns, Runnable afterRelease) {
        this.fns = fns;
        this.description = "VkDevice " + hex(fns.device.address());
        this.waitSet = new DeviceWaitSet(this);
        this.anchor = NativeAnchor.owned(description, new Release(fns.device.address(), waitSet, afterRelease));
    }

    /** A view's claim on a device state. */
    record Acquired(DeviceState state, NativeAnchor.Claim claim) {
    }

    /**
     * A claim for {@code view} on the live state of the device at {@code address}, creating the state
     * (resolving entry points with {@code resolver}) if there is none. {@code afterRelease} (may be null)
     * runs once the device's last hold drops; a non-null one (a device gpusync just created) always gets a
     * new state, replacing any stale entry for a reused address.
     */
    static Acquired acquire(Object view, Supplier<DeviceFunctions> resolver, long address, Runnable afterRelease) {
        synchronized (LIVE) {
            DeviceState existing = LIVE.get(address);
            if (existing != null && afterRelease == null) {
                try {
                    return new Acquired(existing, existing.anchor.claim(view));
                } catch (IllegalStateException released) {
                    LIVE.remove(address, existing);
                }
            }
            DeviceState state = new DeviceState(resolver.get(), afterRelease);
            NativeAnchor.Claim claim = state.anchor.claim(view);
            LIVE.put(address, state);
            return new Acquired(state, claim);
        }
    }

    /** Whether a call on this device has reported {@code VK_ERROR_DEVICE_LOST}. */
    boolean isLost() {
        return lost;
    }

    /** Throws {@link DeviceLostException} if the device is known to be lost. */
    void checkNotLost(String what) {
        if (lost) {
            throw new DeviceLostException(BackendKind.VULKAN, what + ": " + description
                    + " was lost earlier (VK_ERROR_DEVICE_LOST); every wait on it fails");
        }
    }

    /** The exception for {@code code}; remembers device loss so that every later call fails fast. */
    SyncException failure(int code, String what) {
        if (code == VkResults.DEVICE_LOST) {
            lost = true;
        }
        return VkResults.failure(code, what);
    }

    void check(int code, String what) {
        if (code != VkResults.SUCCESS) {
            throw failure(code, what);
        }
    }

    @Override
    public String toString() {
        return description;
    }

    /** Runs when the device's last hold drops: refers to no view or waiter. */
    private record Release(long address, DeviceWaitSet waitSet, Runnable afterRelease) implements Runnable {
        @Override
        public void run() {
            try {
                waitSet.destroyWakeSemaphore();
            } finally {
                synchronized (LIVE) {
                    DeviceState s = LIVE.get(address);
                    if (s != null && s.waitSet == waitSet) {
                        LIVE.remove(address);
                    }
                }
                if (afterRelease != null) {
                    afterRelease.run();
                }
            }
        }
    }

    /** For tests: whether gpusync tracks a live state for {@code device}. */
    static boolean isLive(MemorySegment device) {
        synchronized (LIVE) {
            DeviceState s = LIVE.get(device.address());
            return s != null && !s.anchor.isReleased();
        }
    }
}
