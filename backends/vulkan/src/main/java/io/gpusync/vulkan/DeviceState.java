package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncException;
import io.gpusync.internal.ProcessServices;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * What gpusync keeps per {@code VkDevice}, shared by every {@link VulkanDevice} view and every waiter of
 * that device: the resolved entry points, the device's {@link DeviceWaitSet}, the {@link WakeSemaphore}
 * of its blocked timeline waits, a sticky "device lost" flag, and the device's lifetime {@link NativeAnchor}.
 *
 * <p>The anchor is held by every open {@link VulkanDevice} view, every waiter, every owned handle (until
 * it is destroyed) and every wait in progress. When the last hold drops, the wait set's wake-up semaphore,
 * the wake semaphore and the submissions' retirement semaphore ({@link SubmissionHolds}) are destroyed.
 *
 * <p><b>One state per live device.</b> {@link #acquire} shares the state of an address only while a view
 * of it ({@link VulkanDevice}) is open: the views hold a second anchor, and when the last one is closed (or
 * collected) the address is retired from the table. A later {@code wrap} of the same address — which may be a
 * new {@code VkDevice} the application created after destroying the old one, at the same address — then
 * gets a fresh state (fresh entry points, wait set and "device lost" flag), never a destroyed device's;
 * waiters of the old state keep theirs until they are closed. Thread-safe.
 */
final class DeviceState {

    final DeviceFunctions fns;
    final NativeAnchor anchor;
    final DeviceWaitSet waitSet;
    final WakeSemaphore wakeSemaphore;
    /** Holds on owned handles that pending {@link VulkanDevice#submit} batches refer to. */
    final SubmissionHolds submissions;
    private final NativeAnchor views;
    /** Semaphores and fences gpusync owns (adopted or created), by handle, until their release begins. */
    private final ConcurrentHashMap<Long, NativeAnchor> owned = new ConcurrentHashMap<>();
    private final String description;
    private volatile boolean lost;

    private DeviceState(DeviceFunctions fns) {
        this.fns = fns;
        long address = fns.device.address();
        this.description = "VkDevice " + hex(address);
        this.waitSet = new DeviceWaitSet(this);
        this.wakeSemaphore = new WakeSemaphore(this);
        this.submissions = new SubmissionHolds(this);
        this.anchor = NativeAnchor.adopt(description, new Release(address, waitSet, wakeSemaphore, submissions));
        this.views = NativeAnchor.adopt("views of " + description, new Retire(address, this));
    }

    /** The device states of this process, a {@link ProcessServices} service: one per live {@code VkDevice}. */
    private static final class Live {
        /** States with open views, by device address. Guarded by this object, as is {@link #unreleased}. */
        final Map<Long, DeviceState> shared = new HashMap<>();
        /** States whose device has not been released yet. */
        final Set<DeviceState> unreleased = new HashSet<>();

        static Live process() {
            return ProcessServices.get().service(Live.class, Live::new);
        }
    }

    /** A view's claims on a device state: the device itself, and its place among the open views. */
    record Acquired(DeviceState state, NativeAnchor.Claim claim, NativeAnchor.Claim viewClaim) {
        void close() {
            viewClaim.close();
            claim.close();
        }
    }

    /**
     * A claim for {@code view} on the live state of the device at {@code address}, creating the state
     * (resolving entry points with {@code resolver}) if there is none. {@code afterRelease} (may be null)
     * runs once the device's last hold drops; a non-null one (a device gpusync just created) always gets a
     * new state, replacing any stale entry for a reused address.
     */
    static Acquired acquire(Object view, Supplier<DeviceFunctions> resolver, long address) {
        Live live = Live.process();
        synchronized (live) {
            DeviceState existing = live.shared.get(address);
            if (existing != null) {
                Acquired shared = existing.tryClaim(view);
                if (shared != null) {
                    return shared;
                }
                live.shared.remove(address, existing);
            }
            DeviceState state = new DeviceState(resolver.get());
            Acquired acquired = state.tryClaim(view);
            live.shared.put(address, state);
            live.unreleased.add(state);
            return acquired;
        }
    }

    /** Claims for a new view, or {@code null} once every view (or the device) is gone. */
    private Acquired tryClaim(Object view) {
        NativeAnchor.Claim viewClaim;
        try {
            viewClaim = views.claim(view);
        } catch (IllegalStateException noOpenView) {
            return null;
        }
        try {
            return new Acquired(this, anchor.claim(view), viewClaim);
        } catch (IllegalStateException released) {
            viewClaim.close();
            return null;
        }
    }

    /**
     * Records that gpusync owns {@code handle} (a semaphore or fence) through {@code anchor}, once a waiter holds
     * the anchor (a fresh anchor's first claim could otherwise be a {@link #holdIfOwned} whose end releases it).
     */
    void own(long handle, NativeAnchor anchor) {
        owned.put(handle, anchor);
    }

    /** Forgets {@code handle}: its release has begun. */
    void disown(long handle) {
        owned.computeIfPresent(handle, (k, a) -> a.isReleased() ? null : a);
    }

    /** A hold on an owned handle: keeps it from being destroyed until {@link #close()}. */
    record Hold(NativeAnchor.Claim claim, Object holder) implements AutoCloseable {
        @Override
        public void close() {
            claim.close();
            Reference.reachabilityFence(holder); // the claim's owner: reachable until the claim is closed
        }
    }

    /**
     * A hold on {@code handle} if gpusync owns it (adopted or created here), or {@code null} if it does not:
     * borrowed or unknown here, it is the caller's to keep alive (a handle gpusync has already destroyed is
     * unknown too: a dead handle). Taken before gpusync hands the handle to the driver and closed once the driver
     * is done with it, so that no waiter's close can destroy it in between.
     *
     * @throws IllegalStateException if gpusync owns {@code handle} and its release has begun (every waiter on it
     *                               was closed): the handle must not reach the driver
     */
    Hold holdIfOwned(long handle, String what) {
        NativeAnchor anchor = owned.get(handle);
        while (anchor != null) {
            Object holder = new Object();
            try {
                return new Hold(anchor.claim(holder), holder);
            } catch (IllegalStateException released) {
                NativeAnchor now = owned.get(handle);
                if (now == anchor) { // released, not yet destroyed: the handle is still the one gpusync let go
                    throw new IllegalStateException(what + ": " + anchor.describe() + " was owned by gpusync and has"
                            + " been released (every waiter on it was closed)");
                }
                anchor = now; // destroyed meanwhile, so the value may now name another object
            }
        }
        return null;
    }

    /** Runs {@code call}, which hands {@code handle} to the driver, under {@link #holdIfOwned}. */
    <T> T holdOwned(long handle, String what, Supplier<T> call) {
        Hold hold = holdIfOwned(handle, what);
        try {
            return call.get();
        } finally {
            if (hold != null) {
                hold.close();
            }
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
    private record Release(long address, DeviceWaitSet waitSet, WakeSemaphore wakeSemaphore,
                           SubmissionHolds submissions) implements Runnable {
        @Override
        public void run() {
            try {
                try {
                    waitSet.destroyWakeSemaphore();
                } finally {
                    try {
                        wakeSemaphore.destroy();
                    } finally {
                        submissions.destroy(); // no hold is pending: each one holds the device
                    }
                }
            } finally {
                Live live = Live.process();
                synchronized (live) {
                    DeviceState s = live.shared.get(address);
                    if (s != null && s.waitSet == waitSet) {
                        live.shared.remove(address);
                    }
                    live.unreleased.removeIf(u -> u.waitSet == waitSet);
                }
            }
        }
    }

    /** Runs when the last view of a state is closed: later wraps of the address get a fresh state. */
    private record Retire(long address, DeviceState state) implements Runnable {
        @Override
        public void run() {
            Live live = Live.process();
            synchronized (live) {
                live.shared.remove(address, state);
            }
        }
    }

    /** For tests: whether gpusync tracks an unreleased state for {@code device}. */
    static boolean isLive(MemorySegment device) {
        Live live = Live.process();
        synchronized (live) {
            for (DeviceState s : live.unreleased) {
                if (s.fns.device.address() == device.address() && !s.anchor.isReleased()) {
                    return true;
                }
            }
            return false;
        }
    }
}
