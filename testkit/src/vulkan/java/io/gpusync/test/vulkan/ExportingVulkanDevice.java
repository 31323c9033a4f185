package io.gpusync.test.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.vulkan.PFN_vkCreateSemaphore;
import io.gpusync.bindings.vulkan.PFN_vkDestroySemaphore;
import io.gpusync.bindings.vulkan.PFN_vkGetSemaphoreFdKHR;
import io.gpusync.bindings.vulkan.PFN_vkSignalSemaphore;
import io.gpusync.bindings.vulkan.PFN_vkWaitSemaphores;
import io.gpusync.bindings.vulkan.VkApplicationInfo;
import io.gpusync.bindings.vulkan.VkDeviceCreateInfo;
import io.gpusync.bindings.vulkan.VkDeviceQueueCreateInfo;
import io.gpusync.bindings.vulkan.VkExportSemaphoreCreateInfo;
import io.gpusync.bindings.vulkan.VkInstanceCreateInfo;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceIDProperties;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceProperties2;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceTimelineSemaphoreFeatures;
import io.gpusync.bindings.vulkan.VkSemaphoreCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreGetFdInfoKHR;
import io.gpusync.bindings.vulkan.VkSemaphoreSignalInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreTypeCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreWaitInfo;
import io.gpusync.bindings.vulkan.VkSubmitInfo;
import io.gpusync.bindings.vulkan.Vulkan;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * A producer of Vulkan semaphores that other APIs import, for tests, benchmarks and demos (not a waiter): timeline or
 * binary semaphores created exportable as opaque fds ({@code VK_KHR_external_semaphore_fd}), signalled from the host
 * (timeline) or by an empty queue submit (binary), and waited on from the host — the Vulkan side of the GL-semaphore
 * and CUDA external-semaphore bridges. Opened on the physical device with a given UUID (the one the importing API
 * runs on), or the first one.
 *
 * <p><b>Threading and blocking.</b> Not thread-safe: one thread at a time. {@link #waitFor} blocks up to its timeout;
 * {@link #close} waits for the device to go idle. Every other call returns at once. Semaphores it creates are the
 * caller's to {@linkplain #destroySemaphore destroy} before {@link #close}.
 */
public final class ExportingVulkanDevice implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment instance;
    private final MemorySegment device;
    private final MemorySegment queue;
    private final MemorySegment createSemaphore;
    private final MemorySegment destroySemaphore;
    private final MemorySegment getFd;
    private final MemorySegment signal;
    private final MemorySegment waitSemaphores;

    private ExportingVulkanDevice(MemorySegment instance, MemorySegment device) {
        this.instance = instance;
        this.device = device;
        MemorySegment pQueue = arena.allocate(ValueLayout.ADDRESS);
        Vulkan.vkGetDeviceQueue(device, 0, 0, pQueue);
        this.queue = pQueue.get(ValueLayout.ADDRESS, 0);
        this.createSemaphore = proc("vkCreateSemaphore");
        this.destroySemaphore = proc("vkDestroySemaphore");
        this.getFd = proc("vkGetSemaphoreFdKHR");
        this.signal = proc("vkSignalSemaphore");
        this.waitSemaphores = proc("vkWaitSemaphores");
    }

    /**
     * Opens a device with timeline semaphores and {@code VK_KHR_external_semaphore_fd} on the physical device whose
     * UUID is {@code uuid} ({@code null}: the first).
     *
     * @throws SyncNotSupportedException where Vulkan, such a device or the extension is missing
     */
    public static ExportingVulkanDevice open(byte[] uuid) {
        VkChecks.requireLoader();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment app = VkApplicationInfo.allocate(arena);
            VkApplicationInfo.sType(app, Vulkan.VK_STRUCTURE_TYPE_APPLICATION_INFO());
            VkApplicationInfo.apiVersion(app, Vulkan.VK_API_VERSION_1_2());
            MemorySegment ici = VkInstanceCreateInfo.allocate(arena);
            VkInstanceCreateInfo.sType(ici, Vulkan.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO());
            VkInstanceCreateInfo.pApplicationInfo(ici, app);
            MemorySegment pInstance = arena.allocate(ValueLayout.ADDRESS);
            int vr = Vulkan.vkCreateInstance(ici, MemorySegment.NULL, pInstance);
            refuseUnless(vr == Vulkan.VK_SUCCESS(), "no Vulkan instance (" + VkChecks.name(vr) + ")");
            MemorySegment instance = pInstance.get(ValueLayout.ADDRESS, 0);
            try {
                MemorySegment physical = findPhysicalDevice(arena, instance, uuid);
                refuseUnless(physical != null, uuid == null ? "no Vulkan physical device"
                        : "no Vulkan physical device with UUID " + Arrays.toString(uuid));
                MemorySegment timelineFeatures = VkPhysicalDeviceTimelineSemaphoreFeatures.allocate(arena);
                VkPhysicalDeviceTimelineSemaphoreFeatures.sType(timelineFeatures,
                        Vulkan.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES());
                VkPhysicalDeviceTimelineSemaphoreFeatures.timelineSemaphore(timelineFeatures, Vulkan.VK_TRUE());
                MemorySegment qci = VkDeviceQueueCreateInfo.allocate(arena);
                VkDeviceQueueCreateInfo.sType(qci, Vulkan.VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO());
                VkDeviceQueueCreateInfo.queueFamilyIndex(qci, 0);
                VkDeviceQueueCreateInfo.queueCount(qci, 1);
                VkDeviceQueueCreateInfo.pQueuePriorities(qci, arena.allocateFrom(ValueLayout.JAVA_FLOAT, 1.0f));
                MemorySegment dci = VkDeviceCreateInfo.allocate(arena);
                VkDeviceCreateInfo.sType(dci, Vulkan.VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO());
                VkDeviceCreateInfo.pNext(dci, timelineFeatures);
                VkDeviceCreateInfo.queueCreateInfoCount(dci, 1);
                VkDeviceCreateInfo.pQueueCreateInfos(dci, qci);
                VkDeviceCreateInfo.enabledExtensionCount(dci, 1);
                VkDeviceCreateInfo.ppEnabledExtensionNames(dci, arena.allocateFrom(ValueLayout.ADDRESS,
                        Vulkan.VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME()));
                MemorySegment pDevice = arena.allocate(ValueLayout.ADDRESS);
                vr = Vulkan.vkCreateDevice(physical, dci, MemorySegment.NULL, pDevice);
                refuseUnless(vr == Vulkan.VK_SUCCESS(),
                        "vkCreateDevice with VK_KHR_external_semaphore_fd failed (" + VkChecks.name(vr) + ")");
                return new ExportingVulkanDevice(instance, pDevice.get(ValueLayout.ADDRESS, 0));
            } catch (RuntimeException | Error e) {
                Vulkan.vkDestroyInstance(instance, MemorySegment.NULL);
                throw e;
            }
        }
    }

    /** Creates an exportable semaphore: a timeline at {@code initialValue}, or a binary one when {@code timeline} is false. */
    public long createSemaphore(boolean timeline, long initialValue) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment export = VkExportSemaphoreCreateInfo.allocate(a);
            VkExportSemaphoreCreateInfo.sType(export, Vulkan.VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO());
            VkExportSemaphoreCreateInfo.handleTypes(export, Vulkan.VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT());
            MemorySegment type = VkSemaphoreTypeCreateInfo.allocate(a);
            VkSemaphoreTypeCreateInfo.sType(type, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO());
            VkSemaphoreTypeCreateInfo.pNext(type, export);
            VkSemaphoreTypeCreateInfo.semaphoreType(type,
                    timeline ? Vulkan.VK_SEMAPHORE_TYPE_TIMELINE() : Vulkan.VK_SEMAPHORE_TYPE_BINARY());
            VkSemaphoreTypeCreateInfo.initialValue(type, timeline ? initialValue : 0);
            MemorySegment sci = VkSemaphoreCreateInfo.allocate(a);
            VkSemaphoreCreateInfo.sType(sci, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO());
            VkSemaphoreCreateInfo.pNext(sci, type);
            MemorySegment pSem = a.allocate(ValueLayout.JAVA_LONG);
            check(PFN_vkCreateSemaphore.invoke(createSemaphore, device, sci, MemorySegment.NULL, pSem), "vkCreateSemaphore(exportable)");
            return pSem.get(ValueLayout.JAVA_LONG, 0);
        }
    }

    /** A new opaque fd of {@code semaphore} (the caller owns it until an import takes it). */
    public int exportOpaqueFd(long semaphore) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment gfi = VkSemaphoreGetFdInfoKHR.allocate(a);
            VkSemaphoreGetFdInfoKHR.sType(gfi, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR());
            VkSemaphoreGetFdInfoKHR.semaphore(gfi, MemorySegment.ofAddress(semaphore));
            VkSemaphoreGetFdInfoKHR.handleType(gfi, Vulkan.VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT());
            MemorySegment pFd = a.allocate(ValueLayout.JAVA_INT);
            check(PFN_vkGetSemaphoreFdKHR.invoke(getFd, device, gfi, pFd), "vkGetSemaphoreFdKHR");
            return pFd.get(ValueLayout.JAVA_INT, 0);
        }
    }

    /** {@code vkSignalSemaphore}: the host sets a timeline semaphore to {@code value}. */
    public void hostSignal(long timeline, long value) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ssi = VkSemaphoreSignalInfo.allocate(a);
            VkSemaphoreSignalInfo.sType(ssi, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO());
            VkSemaphoreSignalInfo.semaphore(ssi, MemorySegment.ofAddress(timeline));
            VkSemaphoreSignalInfo.value(ssi, value);
            check(PFN_vkSignalSemaphore.invoke(signal, device, ssi), "vkSignalSemaphore");
        }
    }

    /** An empty {@code vkQueueSubmit} that signals the binary {@code semaphore}. */
    public void signalOnQueue(long binary) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment info = VkSubmitInfo.allocate(a);
            VkSubmitInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_SUBMIT_INFO());
            VkSubmitInfo.signalSemaphoreCount(info, 1);
            VkSubmitInfo.pSignalSemaphores(info, a.allocateFrom(ValueLayout.JAVA_LONG, binary));
            check(Vulkan.vkQueueSubmit(queue, 1, info, MemorySegment.NULL), "vkQueueSubmit(signal)");
        }
    }

    /** {@code vkWaitSemaphores} for a timeline value: {@code true} if reached within {@code timeoutNanos}. */
    public boolean waitFor(long timeline, long value, long timeoutNanos) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment wi = VkSemaphoreWaitInfo.allocate(a);
            VkSemaphoreWaitInfo.sType(wi, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO());
            VkSemaphoreWaitInfo.semaphoreCount(wi, 1);
            VkSemaphoreWaitInfo.pSemaphores(wi, a.allocateFrom(ValueLayout.JAVA_LONG, timeline));
            VkSemaphoreWaitInfo.pValues(wi, a.allocateFrom(ValueLayout.JAVA_LONG, value));
            int vr = PFN_vkWaitSemaphores.invoke(waitSemaphores, device, wi, timeoutNanos);
            if (vr != Vulkan.VK_TIMEOUT()) {
                check(vr, "vkWaitSemaphores");
            }
            return vr == Vulkan.VK_SUCCESS();
        }
    }

    /** Destroys a semaphore this device created (no wait may still use it). */
    public void destroySemaphore(long semaphore) {
        PFN_vkDestroySemaphore.invoke(destroySemaphore, device, MemorySegment.ofAddress(semaphore), MemorySegment.NULL);
    }

    /** Waits for the queue to drain, then destroys the device and the instance. */
    @Override
    public void close() {
        Vulkan.vkDeviceWaitIdle(device);
        Vulkan.vkDestroyDevice(device, MemorySegment.NULL);
        Vulkan.vkDestroyInstance(instance, MemorySegment.NULL);
        arena.close();
    }

    private MemorySegment proc(String name) {
        MemorySegment fn = Vulkan.vkGetDeviceProcAddr(device, arena.allocateFrom(name));
        refuseUnless(!fn.equals(MemorySegment.NULL), "the device has no " + name);
        return fn;
    }

    private static void refuseUnless(boolean ok, String why) {
        if (!ok) {
            throw new SyncNotSupportedException(BackendKind.VULKAN, why);
        }
    }

    private static void check(int vr, String what) {
        VkChecks.check(vr, what);
    }

    private static MemorySegment findPhysicalDevice(Arena arena, MemorySegment instance, byte[] uuid) {
        MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
        Vulkan.vkEnumeratePhysicalDevices(instance, count, MemorySegment.NULL);
        int n = count.get(ValueLayout.JAVA_INT, 0);
        MemorySegment devices = arena.allocate(ValueLayout.ADDRESS, Math.max(1, n));
        check(Vulkan.vkEnumeratePhysicalDevices(instance, count, devices), "vkEnumeratePhysicalDevices");
        n = Math.min(n, count.get(ValueLayout.JAVA_INT, 0)); // the devices the driver wrote, as VulkanContext reads them
        for (int i = 0; i < n; i++) {
            MemorySegment pd = devices.getAtIndex(ValueLayout.ADDRESS, i);
            if (uuid == null) {
                return pd;
            }
            MemorySegment id = VkPhysicalDeviceIDProperties.allocate(arena);
            VkPhysicalDeviceIDProperties.sType(id, Vulkan.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES());
            MemorySegment props = VkPhysicalDeviceProperties2.allocate(arena);
            VkPhysicalDeviceProperties2.sType(props, Vulkan.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2());
            VkPhysicalDeviceProperties2.pNext(props, id);
            Vulkan.vkGetPhysicalDeviceProperties2(pd, props);
            if (Arrays.equals(VkPhysicalDeviceIDProperties.deviceUUID(id).toArray(ValueLayout.JAVA_BYTE), uuid)) {
                return pd;
            }
        }
        return null;
    }
}
