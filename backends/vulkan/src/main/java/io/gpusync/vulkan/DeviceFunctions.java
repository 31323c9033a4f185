package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.vulkan.PFN_vkCreateFence;
import io.gpusync.bindings.vulkan.PFN_vkCreateSemaphore;
import io.gpusync.bindings.vulkan.PFN_vkDestroyDevice;
import io.gpusync.bindings.vulkan.PFN_vkDestroyFence;
import io.gpusync.bindings.vulkan.PFN_vkDestroySemaphore;
import io.gpusync.bindings.vulkan.PFN_vkDeviceWaitIdle;
import io.gpusync.bindings.vulkan.PFN_vkGetDeviceProcAddr;
import io.gpusync.bindings.vulkan.PFN_vkGetDeviceQueue;
import io.gpusync.bindings.vulkan.PFN_vkGetFenceStatus;
import io.gpusync.bindings.vulkan.PFN_vkGetSemaphoreCounterValue;
import io.gpusync.bindings.vulkan.PFN_vkQueueSubmit;
import io.gpusync.bindings.vulkan.PFN_vkResetFences;
import io.gpusync.bindings.vulkan.PFN_vkSignalSemaphore;
import io.gpusync.bindings.vulkan.PFN_vkWaitForFences;
import io.gpusync.bindings.vulkan.PFN_vkWaitSemaphores;
import io.gpusync.bindings.vulkan.VkFenceCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreSignalInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreTypeCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreWaitInfo;
import io.gpusync.bindings.vulkan.Vulkan;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicLong;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * The device-level entry points of one {@code VkDevice}, resolved once through {@code vkGetDeviceProcAddr}
 * (so calls skip the loader's trampolines), with thin wrappers that marshal arguments. No lifetime logic:
 * callers guarantee the device and the handles they pass are alive. Thread-safe (immutable, apart from
 * the test counters); Vulkan's external-synchronisation rules (a queue, a semaphore being destroyed) are
 * the callers' business.
 */
final class DeviceFunctions {
    /** {@code UINT64_MAX}: Vulkan's "wait forever". */
    static final long INFINITE = -1L;

    final MemorySegment device;
    private final MemorySegment waitSemaphores;
    private final MemorySegment getSemaphoreCounterValue;
    private final MemorySegment signalSemaphore;
    private final MemorySegment createSemaphore;
    private final MemorySegment destroySemaphore;
    private final MemorySegment createFence;
    private final MemorySegment destroyFence;
    private final MemorySegment waitForFences;
    private final MemorySegment getFenceStatus;
    private final MemorySegment resetFences;
    private final MemorySegment getDeviceQueue;
    private final MemorySegment queueSubmit;
    private final MemorySegment deviceWaitIdle;
    private final MemorySegment destroyDevice;

    /**
     * An 8-byte out-parameter per thread for the probe path (a confined arena per probe costs several
     * hundred ns); GC-managed, so threads that die (virtual ones included) leave nothing behind.
     */
    private static final ThreadLocal<MemorySegment> SCRATCH =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(ValueLayout.JAVA_LONG));

    /** Test hooks: how many semaphores / fences gpusync has destroyed on this device. */
    final AtomicLong semaphoresDestroyed = new AtomicLong();
    final AtomicLong fencesDestroyed = new AtomicLong();

    private DeviceFunctions(MemorySegment device, Lookup lookup) {
        this.device = device;
        this.waitSemaphores = lookup.optional("vkWaitSemaphores", "vkWaitSemaphoresKHR");
        this.getSemaphoreCounterValue = lookup.optional("vkGetSemaphoreCounterValue", "vkGetSemaphoreCounterValueKHR");
        this.signalSemaphore = lookup.optional("vkSignalSemaphore", "vkSignalSemaphoreKHR");
        this.createSemaphore = lookup.required("vkCreateSemaphore");
        this.destroySemaphore = lookup.required("vkDestroySemaphore");
        this.createFence = lookup.required("vkCreateFence");
        this.destroyFence = lookup.required("vkDestroyFence");
        this.waitForFences = lookup.required("vkWaitForFences");
        this.getFenceStatus = lookup.required("vkGetFenceStatus");
        this.resetFences = lookup.required("vkResetFences");
        this.getDeviceQueue = lookup.required("vkGetDeviceQueue");
        this.queueSubmit = lookup.required("vkQueueSubmit");
        this.deviceWaitIdle = lookup.required("vkDeviceWaitIdle");
        this.destroyDevice = lookup.required("vkDestroyDevice");
    }

    /**
     * Resolves the entry points of {@code device}: through the instance's own {@code vkGetDeviceProcAddr}
     * when {@code instance} is not NULL, else through the loader's exported one (equivalent for devices
     * created through the system loader, as LWJGL's are).
     */
    static DeviceFunctions resolve(MemorySegment instance, MemorySegment device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment gdpa = MemorySegment.NULL;
            if (!instance.equals(MemorySegment.NULL)) {
                gdpa = Vulkan.vkGetInstanceProcAddr(instance, arena.allocateFrom("vkGetDeviceProcAddr"));
                if (gdpa.equals(MemorySegment.NULL)) {
                    throw new SyncInvalidArgumentException(BackendKind.VULKAN, "vkGetInstanceProcAddr(VkInstance "
                            + hex(instance.address()) + ", \"vkGetDeviceProcAddr\") returned NULL: not a valid VkInstance");
                }
            }
            return new DeviceFunctions(device, new Lookup(gdpa, device));
        }
    }

    private record Lookup(MemorySegment gdpa, MemorySegment device) {
        MemorySegment find(String name) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment cName = arena.allocateFrom(name);
                return gdpa.equals(MemorySegment.NULL) ? Vulkan.vkGetDeviceProcAddr(device, cName)
                        : PFN_vkGetDeviceProcAddr.invoke(gdpa, device, cName);
            }
        }

        MemorySegment required(String name) {
            MemorySegment fn = find(name);
            if (fn.equals(MemorySegment.NULL)) {
                throw new SyncInvalidArgumentException(BackendKind.VULKAN, "vkGetDeviceProcAddr(VkDevice "
                        + hex(device.address()) + ", \"" + name + "\") returned NULL: not a valid VkDevice");
            }
            return fn;
        }

        MemorySegment optional(String core, String khr) {
            MemorySegment fn = find(core);
            return fn.equals(MemorySegment.NULL) ? find(khr) : fn;
        }
    }

    boolean hasTimelineSemaphores() {
        return !waitSemaphores.equals(MemorySegment.NULL) && !getSemaphoreCounterValue.equals(MemorySegment.NULL)
                && !signalSemaphore.equals(MemorySegment.NULL);
    }

    private void requireTimeline(String what) {
        if (!hasTimelineSemaphores()) {
            throw new SyncNotSupportedException(BackendKind.VULKAN, what + " needs timeline semaphores (Vulkan 1.2 or "
                    + "VK_KHR_timeline_semaphore), but VkDevice " + hex(device.address()) + " does not expose them");
        }
    }

    static MemorySegment handle(long handle) {
        return MemorySegment.ofAddress(handle);
    }

    /** {@code vkWaitSemaphores} over {@code count} (semaphore, value) pairs; returns the raw VkResult. */
    int waitSemaphores(long[] semaphores, long[] values, int count, boolean any, long timeoutNanos) {
        requireTimeline("vkWaitSemaphores");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sems = arena.allocate(ValueLayout.JAVA_LONG, count);
            MemorySegment vals = arena.allocate(ValueLayout.JAVA_LONG, count);
            MemorySegment.copy(semaphores, 0, sems, ValueLayout.JAVA_LONG, 0, count);
            MemorySegment.copy(values, 0, vals, ValueLayout.JAVA_LONG, 0, count);
            MemorySegment info = VkSemaphoreWaitInfo.allocate(arena);
            VkSemaphoreWaitInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO());
            VkSemaphoreWaitInfo.flags(info, any ? Vulkan.VK_SEMAPHORE_WAIT_ANY_BIT() : 0);
            VkSemaphoreWaitInfo.semaphoreCount(info, count);
            VkSemaphoreWaitInfo.pSemaphores(info, sems);
            VkSemaphoreWaitInfo.pValues(info, vals);
            return PFN_vkWaitSemaphores.invoke(waitSemaphores, device, info, timeoutNanos);
        }
    }

    /** {@code vkWaitSemaphores} on one semaphore; returns the raw VkResult. */
    int waitSemaphore(long semaphore, long value, long timeoutNanos) {
        return waitSemaphores(new long[]{semaphore}, new long[]{value}, 1, false, timeoutNanos);
    }

    /**
     * {@code vkGetSemaphoreCounterValue}: stores the counter (unsigned) in {@code out[0]} and returns the
     * raw VkResult.
     */
    int counterValue(long semaphore, long[] out) {
        requireTimeline("vkGetSemaphoreCounterValue");
        MemorySegment value = SCRATCH.get();
        int r = PFN_vkGetSemaphoreCounterValue.invoke(getSemaphoreCounterValue, device, handle(semaphore), value);
        out[0] = value.get(ValueLayout.JAVA_LONG, 0);
        return r;
    }

    /** {@code vkSignalSemaphore}; returns the raw VkResult. */
    int signalSemaphore(long semaphore, long value) {
        requireTimeline("vkSignalSemaphore");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment info = VkSemaphoreSignalInfo.allocate(arena);
            VkSemaphoreSignalInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO());
            VkSemaphoreSignalInfo.semaphore(info, handle(semaphore));
            VkSemaphoreSignalInfo.value(info, value);
            return PFN_vkSignalSemaphore.invoke(signalSemaphore, device, info);
        }
    }

    /** Creates a timeline semaphore at {@code initialValue}, or a binary one; throws on failure. */
    long createSemaphore(boolean timeline, long initialValue) {
        if (timeline) {
            requireTimeline("a timeline VkSemaphore");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment info = VkSemaphoreCreateInfo.allocate(arena);
            VkSemaphoreCreateInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO());
            if (timeline) {
                MemorySegment type = VkSemaphoreTypeCreateInfo.allocate(arena);
                VkSemaphoreTypeCreateInfo.sType(type, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO());
                VkSemaphoreTypeCreateInfo.semaphoreType(type, Vulkan.VK_SEMAPHORE_TYPE_TIMELINE());
                VkSemaphoreTypeCreateInfo.initialValue(type, initialValue);
                VkSemaphoreCreateInfo.pNext(info, type);
            }
            MemorySegment out = arena.allocate(ValueLayout.JAVA_LONG);
            int r = PFN_vkCreateSemaphore.invoke(createSemaphore, device, info, MemorySegment.NULL, out);
            VkResults.check(r, "vkCreateSemaphore(" + (timeline ? "timeline, initial value "
                    + Long.toUnsignedString(initialValue) : "binary") + ")");
            return out.get(ValueLayout.JAVA_LONG, 0);
        }
    }

    void destroySemaphore(long semaphore) {
        PFN_vkDestroySemaphore.invoke(destroySemaphore, device, handle(semaphore), MemorySegment.NULL);
        semaphoresDestroyed.incrementAndGet();
    }

    /** Creates a fence, signalled or not; throws on failure. */
    long createFence(boolean signalled) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment info = VkFenceCreateInfo.allocate(arena);
            VkFenceCreateInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_FENCE_CREATE_INFO());
            VkFenceCreateInfo.flags(info, signalled ? Vulkan.VK_FENCE_CREATE_SIGNALED_BIT() : 0);
            MemorySegment out = arena.allocate(ValueLayout.JAVA_LONG);
            VkResults.check(PFN_vkCreateFence.invoke(createFence, device, info, MemorySegment.NULL, out), "vkCreateFence");
            return out.get(ValueLayout.JAVA_LONG, 0);
        }
    }

    void destroyFence(long fence) {
        PFN_vkDestroyFence.invoke(destroyFence, device, handle(fence), MemorySegment.NULL);
        fencesDestroyed.incrementAndGet();
    }

    /** {@code vkWaitForFences} on one fence; returns the raw VkResult. */
    int waitForFence(long fence, long timeoutNanos) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fences = arena.allocateFrom(ValueLayout.JAVA_LONG, fence);
            return PFN_vkWaitForFences.invoke(waitForFences, device, 1, fences, Vulkan.VK_TRUE(), timeoutNanos);
        }
    }

    /** {@code vkGetFenceStatus}; returns the raw VkResult. */
    int fenceStatus(long fence) {
        return PFN_vkGetFenceStatus.invoke(getFenceStatus, device, handle(fence));
    }

    void resetFence(long fence) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fences = arena.allocateFrom(ValueLayout.JAVA_LONG, fence);
            VkResults.check(PFN_vkResetFences.invoke(resetFences, device, 1, fences), "vkResetFences(VkFence " + hex(fence) + ")");
        }
    }

    MemorySegment deviceQueue(int family, int index) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            PFN_vkGetDeviceQueue.invoke(getDeviceQueue, device, family, index, out);
            return out.get(ValueLayout.ADDRESS, 0);
        }
    }

    /** {@code vkQueueSubmit}; returns the raw VkResult. The caller holds the queue's lock. */
    int queueSubmit(MemorySegment queue, int submitCount, MemorySegment submits, long fence) {
        return PFN_vkQueueSubmit.invoke(queueSubmit, queue, submitCount, submits, handle(fence));
    }

    int deviceWaitIdle() {
        return PFN_vkDeviceWaitIdle.invoke(deviceWaitIdle, device);
    }

    void destroyDevice() {
        PFN_vkDestroyDevice.invoke(destroyDevice, device, MemorySegment.NULL);
    }
}
