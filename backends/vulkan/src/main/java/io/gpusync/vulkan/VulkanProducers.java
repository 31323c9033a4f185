package io.gpusync.vulkan;

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
import io.gpusync.bindings.vulkan.VkPhysicalDeviceFeatures2;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceIDProperties;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceProperties2;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceProperties;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceTimelineSemaphoreFeatures;
import io.gpusync.bindings.vulkan.VkQueueFamilyProperties;
import io.gpusync.bindings.vulkan.VkSemaphoreCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreGetFdInfoKHR;
import io.gpusync.bindings.vulkan.VkSemaphoreSignalInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreTypeCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreWaitInfo;
import io.gpusync.bindings.vulkan.VkSubmitInfo;
import io.gpusync.bindings.vulkan.VkTimelineSemaphoreSubmitInfo;
import io.gpusync.bindings.vulkan.Vulkan;
import io.gpusync.internal.NativeLibraries;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * Producers of Vulkan devices and semaphores for gpusync's own tests, the demo and the benchmarks: they make GPU
 * work and signal the primitives that the sync points of this package wait on. They are not part of the
 * synchronisation contract (applications bring their own Vulkan work); they live here, in one clearly named
 * holder, because the tests and benchmarks of other modules share them. Not instantiable; each nested class states
 * its own threading, blocking and lifetime rules.
 */
public final class VulkanProducers {
    private VulkanProducers() {
    }

    /**
     * A Vulkan instance, device and queue that gpusync creates and owns — a ready-made <em>producer</em> for
     * demos, benchmarks and tests: it creates timeline semaphores and fences (through {@link #device()}) and
     * submits empty batches to its queue that signal them, the way real GPU work would at its end.
     *
     * <p>{@link #create()} picks the first physical device that supports Vulkan 1.2 timeline semaphores (with
     * {@code VK_DRIVER_FILES} pointing at lavapipe's ICD, that is the CPU driver) and a queue family, and
     * enables the {@code timelineSemaphore} feature.
     *
     * <p><b>Threading.</b> Thread-safe: submissions are serialised on an internal lock (Vulkan queues are
     * externally synchronised). Submitting never waits for the GPU, so there is nothing to cancel; the last
     * release's {@code vkDeviceWaitIdle} is the only wait, and it runs on gpusync's housekeeping thread (never
     * on the thread that drops the last hold, which may be a driver thread, an event loop or the cleaner).
     *
     * <p><b>Lifetime.</b> {@link #close()} (idempotent) closes {@link #device()}; the {@code VkDevice} and
     * {@code VkInstance} are destroyed — after {@code vkDeviceWaitIdle} — once every waiter minted from the
     * device is also closed (or unreachable) and no wait is in progress, so a point can never outlive its
     * device. Submitted work must be able to complete (a submission waiting on a value nobody signals would make
     * that idle-wait hang). A semaphore or fence that gpusync owns (created or adopted through {@link #device()})
     * and that a submission here refers to is held until that submission has completed, even if its last waiter is
     * closed first ({@code SubmissionHolds}); a borrowed one is the caller's to keep alive until then.
     */
    public static final class VulkanContext implements AutoCloseable {
        private final MemorySegment instance;
        private final MemorySegment physicalDevice;
        private final VulkanDevice device;
        private final MemorySegment queue;
        private final int queueFamilyIndex;
        private final String deviceName;
        private final Object queueLock = new Object();

        private VulkanContext(MemorySegment instance, MemorySegment physicalDevice, String deviceName,
                              MemorySegment device, int queueFamilyIndex) {
            this.instance = instance;
            this.physicalDevice = physicalDevice;
            this.deviceName = deviceName;
            this.queueFamilyIndex = queueFamilyIndex;
            this.device = VulkanDevice.created(instance, device, new DestroyDeviceAndInstance(instance, device));
            this.queue = this.device.state.fns.deviceQueue(queueFamilyIndex, 0);
        }

        /**
         * Creates an instance (API 1.2), picks a device with timeline semaphores and creates it with one queue.
         *
         * @throws SyncNotSupportedException if there is no Vulkan loader, no driver, or no device with Vulkan 1.2
         *                                   timeline semaphores
         * @throws io.gpusync.SyncException  on any other driver failure
         */
        public static VulkanContext create() {
            NativeLibraries.require(BackendKind.VULKAN, "libvulkan.so.1");
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment version = arena.allocate(ValueLayout.JAVA_INT);
                VkResults.check(Vulkan.vkEnumerateInstanceVersion(version), "vkEnumerateInstanceVersion");
                if (Integer.compareUnsigned(version.get(ValueLayout.JAVA_INT, 0), Vulkan.VK_API_VERSION_1_2()) < 0) {
                    throw new SyncNotSupportedException(BackendKind.VULKAN, "the Vulkan loader is older than 1.2");
                }
                MemorySegment app = VkApplicationInfo.allocate(arena);
                VkApplicationInfo.sType(app, Vulkan.VK_STRUCTURE_TYPE_APPLICATION_INFO());
                VkApplicationInfo.pApplicationName(app, arena.allocateFrom("gpusync"));
                VkApplicationInfo.pEngineName(app, arena.allocateFrom("gpusync"));
                VkApplicationInfo.apiVersion(app, Vulkan.VK_API_VERSION_1_2());
                MemorySegment ci = VkInstanceCreateInfo.allocate(arena);
                VkInstanceCreateInfo.sType(ci, Vulkan.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO());
                VkInstanceCreateInfo.pApplicationInfo(ci, app);
                MemorySegment pInstance = arena.allocate(ValueLayout.ADDRESS);
                int r = Vulkan.vkCreateInstance(ci, MemorySegment.NULL, pInstance);
                if (r == Vulkan.VK_ERROR_INCOMPATIBLE_DRIVER() || r == Vulkan.VK_ERROR_INITIALIZATION_FAILED()) {
                    throw new SyncNotSupportedException(BackendKind.VULKAN, "vkCreateInstance found no usable Vulkan "
                            + "driver (" + VkResults.name(r) + "); install one (e.g. mesa-vulkan-drivers) or set VK_DRIVER_FILES");
                }
                VkResults.check(r, "vkCreateInstance");
                MemorySegment instance = pInstance.get(ValueLayout.ADDRESS, 0);
                try {
                    return onInstance(arena, instance);
                } catch (RuntimeException | Error e) {
                    Vulkan.vkDestroyInstance(instance, MemorySegment.NULL);
                    throw e;
                }
            }
        }

        private static VulkanContext onInstance(Arena arena, MemorySegment instance) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            VkResults.check(Vulkan.vkEnumeratePhysicalDevices(instance, count, MemorySegment.NULL), "vkEnumeratePhysicalDevices");
            int n = count.get(ValueLayout.JAVA_INT, 0);
            MemorySegment devices = arena.allocate(ValueLayout.ADDRESS, Math.max(1, n));
            VkResults.check(Vulkan.vkEnumeratePhysicalDevices(instance, count, devices), "vkEnumeratePhysicalDevices");
            n = count.get(ValueLayout.JAVA_INT, 0);
            StringBuilder seen = new StringBuilder();
            for (int i = 0; i < n; i++) {
                MemorySegment pd = devices.getAtIndex(ValueLayout.ADDRESS, i);
                MemorySegment props = VkPhysicalDeviceProperties.allocate(arena);
                Vulkan.vkGetPhysicalDeviceProperties(pd, props);
                String name = VkPhysicalDeviceProperties.deviceName(props).getString(0, StandardCharsets.UTF_8);
                seen.append(seen.isEmpty() ? "" : ", ").append(name);
                if (Integer.compareUnsigned(VkPhysicalDeviceProperties.apiVersion(props), Vulkan.VK_API_VERSION_1_2()) < 0) {
                    continue;
                }
                MemorySegment timeline = VkPhysicalDeviceTimelineSemaphoreFeatures.allocate(arena);
                VkPhysicalDeviceTimelineSemaphoreFeatures.sType(timeline,
                        Vulkan.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES());
                MemorySegment features = VkPhysicalDeviceFeatures2.allocate(arena);
                VkPhysicalDeviceFeatures2.sType(features, Vulkan.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2());
                VkPhysicalDeviceFeatures2.pNext(features, timeline);
                Vulkan.vkGetPhysicalDeviceFeatures2(pd, features);
                if (VkPhysicalDeviceTimelineSemaphoreFeatures.timelineSemaphore(timeline) == 0) {
                    continue;
                }
                int family = queueFamily(arena, pd);
                if (family < 0) {
                    continue;
                }
                return new VulkanContext(instance, pd, name, createDevice(arena, pd, family), family);
            }
            throw new SyncNotSupportedException(BackendKind.VULKAN, "no Vulkan device supports 1.2 timeline semaphores"
                    + " (devices: " + (seen.isEmpty() ? "none" : seen) + ")");
        }

        private static int queueFamily(Arena arena, MemorySegment pd) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            Vulkan.vkGetPhysicalDeviceQueueFamilyProperties(pd, count, MemorySegment.NULL);
            int n = count.get(ValueLayout.JAVA_INT, 0);
            MemorySegment families = VkQueueFamilyProperties.allocateArray(Math.max(1, n), arena);
            Vulkan.vkGetPhysicalDeviceQueueFamilyProperties(pd, count, families);
            int fallback = -1;
            int wanted = Vulkan.VK_QUEUE_GRAPHICS_BIT() | Vulkan.VK_QUEUE_COMPUTE_BIT();
            for (int i = 0; i < count.get(ValueLayout.JAVA_INT, 0); i++) {
                MemorySegment f = VkQueueFamilyProperties.asSlice(families, i);
                if (VkQueueFamilyProperties.queueCount(f) == 0) {
                    continue;
                }
                if ((VkQueueFamilyProperties.queueFlags(f) & wanted) != 0) {
                    return i;
                }
                if (fallback < 0) {
                    fallback = i;
                }
            }
            return fallback;
        }

        private static MemorySegment createDevice(Arena arena, MemorySegment pd, int family) {
            MemorySegment priority = arena.allocateFrom(ValueLayout.JAVA_FLOAT, 1.0f);
            MemorySegment qci = VkDeviceQueueCreateInfo.allocate(arena);
            VkDeviceQueueCreateInfo.sType(qci, Vulkan.VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO());
            VkDeviceQueueCreateInfo.queueFamilyIndex(qci, family);
            VkDeviceQueueCreateInfo.queueCount(qci, 1);
            VkDeviceQueueCreateInfo.pQueuePriorities(qci, priority);
            MemorySegment timeline = VkPhysicalDeviceTimelineSemaphoreFeatures.allocate(arena);
            VkPhysicalDeviceTimelineSemaphoreFeatures.sType(timeline,
                    Vulkan.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES());
            VkPhysicalDeviceTimelineSemaphoreFeatures.timelineSemaphore(timeline, Vulkan.VK_TRUE());
            MemorySegment dci = VkDeviceCreateInfo.allocate(arena);
            VkDeviceCreateInfo.sType(dci, Vulkan.VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO());
            VkDeviceCreateInfo.pNext(dci, timeline);
            VkDeviceCreateInfo.queueCreateInfoCount(dci, 1);
            VkDeviceCreateInfo.pQueueCreateInfos(dci, qci);
            MemorySegment pDevice = arena.allocate(ValueLayout.ADDRESS);
            VkResults.check(Vulkan.vkCreateDevice(pd, dci, MemorySegment.NULL, pDevice), "vkCreateDevice");
            return pDevice.get(ValueLayout.ADDRESS, 0);
        }

        /** The device, for minting points and creating semaphores/fences; closed by {@link #close()}. */
        public VulkanDevice device() {
            return device;
        }

        /** The raw {@code VkInstance}. */
        public MemorySegment instance() {
            return instance;
        }

        /** The raw {@code VkPhysicalDevice}. */
        public MemorySegment physicalDevice() {
            return physicalDevice;
        }

        /** The raw {@code VkQueue} (submit to it only through this object, or hold no other submitter). */
        public MemorySegment queue() {
            return queue;
        }

        /** The queue family of {@link #queue()}. */
        public int queueFamilyIndex() {
            return queueFamilyIndex;
        }

        /** The physical device's name (e.g. {@code llvmpipe (LLVM 15.0.6, 256 bits)}). */
        public String deviceName() {
            return deviceName;
        }

        /**
         * Submits an empty batch that signals the timeline semaphore to {@code value} on the queue (a
         * "queue-signalled" completion, as GPU work would signal it when done). Returns without waiting.
         */
        public void signalOnQueue(long timelineSemaphore, long value) {
            submit(0, 0, timelineSemaphore, value, 0);
        }

        /**
         * Submits an empty batch that waits on the GPU for {@code waitSemaphore ≥ waitValue} and then signals
         * {@code timelineSemaphore} to {@code value}: the signal arrives through the queue once the host (or
         * other work) satisfies the wait.
         */
        public void signalOnQueueAfter(long waitSemaphore, long waitValue, long timelineSemaphore, long value) {
            submit(waitSemaphore, waitValue, timelineSemaphore, value, 0);
        }

        /** Submits an empty batch that signals {@code fence} (unsignalled beforehand, as Vulkan requires). */
        public void signalFenceOnQueue(long fence) {
            submit(0, 0, 0, 0, fence);
        }

        /**
         * Submits an empty batch that signals the <em>binary</em> semaphore {@code binarySemaphore} and, when
         * not 0, {@code fence} — the producer side of {@link VulkanDevice#adoptBinarySemaphore(long, long)}.
         */
        public void signalBinaryOnQueue(long binarySemaphore, long fence) {
            submit(0, 0, binarySemaphore, 0, fence);
        }

        private void submit(long waitSemaphore, long waitValue, long signalSemaphore, long signalValue, long fence) {
            device.mint(() -> {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment info = VkSubmitInfo.allocate(arena);
                    VkSubmitInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_SUBMIT_INFO());
                    MemorySegment timeline = VkTimelineSemaphoreSubmitInfo.allocate(arena);
                    VkTimelineSemaphoreSubmitInfo.sType(timeline, Vulkan.VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO());
                    VkSubmitInfo.pNext(info, timeline);
                    if (waitSemaphore != 0) {
                        VkSubmitInfo.waitSemaphoreCount(info, 1);
                        VkSubmitInfo.pWaitSemaphores(info, arena.allocateFrom(ValueLayout.JAVA_LONG, waitSemaphore));
                        VkSubmitInfo.pWaitDstStageMask(info,
                                arena.allocateFrom(ValueLayout.JAVA_INT, Vulkan.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT()));
                        VkTimelineSemaphoreSubmitInfo.waitSemaphoreValueCount(timeline, 1);
                        VkTimelineSemaphoreSubmitInfo.pWaitSemaphoreValues(timeline,
                                arena.allocateFrom(ValueLayout.JAVA_LONG, waitValue));
                    }
                    if (signalSemaphore != 0) {
                        VkSubmitInfo.signalSemaphoreCount(info, 1);
                        VkSubmitInfo.pSignalSemaphores(info, arena.allocateFrom(ValueLayout.JAVA_LONG, signalSemaphore));
                        VkTimelineSemaphoreSubmitInfo.signalSemaphoreValueCount(timeline, 1);
                        VkTimelineSemaphoreSubmitInfo.pSignalSemaphoreValues(timeline,
                                arena.allocateFrom(ValueLayout.JAVA_LONG, signalValue));
                    }
                    String what = "vkQueueSubmit(wait " + hex(waitSemaphore) + " ≥ " + Long.toUnsignedString(waitValue)
                            + ", signal " + hex(signalSemaphore) + " = " + Long.toUnsignedString(signalValue) + ", fence "
                            + hex(fence) + ") on " + device.state;
                    device.state.checkNotLost(what);
                    synchronized (queueLock) {
                        List<DeviceState.Hold> holds = holdOwned(what, waitSemaphore, signalSemaphore, fence);
                        try {
                            device.state.check(device.state.fns.queueSubmit(queue, 1, info, fence), what);
                        } catch (RuntimeException | Error e) {
                            holds.forEach(DeviceState.Hold::close); // nothing was submitted
                            throw e;
                        }
                        if (!holds.isEmpty()) {
                            retireAfter(arena, holds);
                        }
                    }
                }
                return null;
            });
        }

        /** Holds on the handles gpusync owns among {@code handles} (0: none), for the batch that uses them. */
        private List<DeviceState.Hold> holdOwned(String what, long... handles) {
            List<DeviceState.Hold> holds = new ArrayList<>(handles.length);
            try {
                for (long h : handles) {
                    DeviceState.Hold hold = h == 0 ? null : device.state.holdIfOwned(h, what);
                    if (hold != null) {
                        holds.add(hold);
                    }
                }
            } catch (RuntimeException | Error e) {
                holds.forEach(DeviceState.Hold::close);
                throw e;
            }
            return holds;
        }

        /**
         * Submits the empty batch that tells when the batch just submitted is done, and leaves {@code holds} with
         * {@link SubmissionHolds} until then (see there). If that submit fails the holds are kept for good: when
         * the first batch is done cannot be known.
         */
        private void retireAfter(Arena arena, List<DeviceState.Hold> holds) {
            SubmissionHolds submissions = device.state.submissions;
            long[] retirement = submissions.nextRetirement();
            MemorySegment info = VkSubmitInfo.allocate(arena);
            VkSubmitInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_SUBMIT_INFO());
            MemorySegment timeline = VkTimelineSemaphoreSubmitInfo.allocate(arena);
            VkTimelineSemaphoreSubmitInfo.sType(timeline, Vulkan.VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO());
            VkSubmitInfo.pNext(info, timeline);
            VkSubmitInfo.signalSemaphoreCount(info, 1);
            VkSubmitInfo.pSignalSemaphores(info, arena.allocateFrom(ValueLayout.JAVA_LONG, retirement[0]));
            VkTimelineSemaphoreSubmitInfo.signalSemaphoreValueCount(timeline, 1);
            VkTimelineSemaphoreSubmitInfo.pSignalSemaphoreValues(timeline,
                    arena.allocateFrom(ValueLayout.JAVA_LONG, retirement[1]));
            device.state.check(device.state.fns.queueSubmit(queue, 1, info, 0),
                    "vkQueueSubmit(retirement " + Long.toUnsignedString(retirement[1]) + ") on " + device.state);
            submissions.retire(retirement[1], holds);
        }

        /** Closes {@link #device()}; see the class comment for when the device is destroyed. Idempotent. */
        @Override
        public void close() {
            device.close();
        }

        @Override
        public String toString() {
            return "VulkanContext[" + deviceName + ", " + device.state + "]";
        }

        /** The context's last release: refers to no waiter. */
        private record DestroyDeviceAndInstance(MemorySegment instance, MemorySegment device) implements Runnable {
            @Override
            public void run() {
                try {
                    Vulkan.vkDeviceWaitIdle(device); // a lost device answers at once; nothing else to do about it
                    Vulkan.vkDestroyDevice(device, MemorySegment.NULL);
                } finally {
                    Vulkan.vkDestroyInstance(instance, MemorySegment.NULL);
                }
            }
        }
    }

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
    public static final class ExportingVulkanDevice implements AutoCloseable {
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
            NativeLibraries.require(BackendKind.VULKAN, "libvulkan.so.1");
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment app = VkApplicationInfo.allocate(arena);
                VkApplicationInfo.sType(app, Vulkan.VK_STRUCTURE_TYPE_APPLICATION_INFO());
                VkApplicationInfo.apiVersion(app, Vulkan.VK_API_VERSION_1_2());
                MemorySegment ici = VkInstanceCreateInfo.allocate(arena);
                VkInstanceCreateInfo.sType(ici, Vulkan.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO());
                VkInstanceCreateInfo.pApplicationInfo(ici, app);
                MemorySegment pInstance = arena.allocate(ValueLayout.ADDRESS);
                int vr = Vulkan.vkCreateInstance(ici, MemorySegment.NULL, pInstance);
                refuseUnless(vr == Vulkan.VK_SUCCESS(), "no Vulkan instance (" + VkResults.name(vr) + ")");
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
                            "vkCreateDevice with VK_KHR_external_semaphore_fd failed (" + VkResults.name(vr) + ")");
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
                if (vr != VkResults.TIMEOUT) {
                    check(vr, "vkWaitSemaphores");
                }
                return vr == VkResults.SUCCESS;
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
            if (vr != VkResults.SUCCESS) {
                throw VkResults.failure(vr, what);
            }
        }

        private static MemorySegment findPhysicalDevice(Arena arena, MemorySegment instance, byte[] uuid) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            Vulkan.vkEnumeratePhysicalDevices(instance, count, MemorySegment.NULL);
            int n = count.get(ValueLayout.JAVA_INT, 0);
            MemorySegment devices = arena.allocate(ValueLayout.ADDRESS, Math.max(1, n));
            Vulkan.vkEnumeratePhysicalDevices(instance, count, devices);
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
}
