package io.gpusync.test.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.vulkan.VkApplicationInfo;
import io.gpusync.bindings.vulkan.VkDeviceCreateInfo;
import io.gpusync.bindings.vulkan.VkDeviceQueueCreateInfo;
import io.gpusync.bindings.vulkan.VkInstanceCreateInfo;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceFeatures2;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceProperties;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceTimelineSemaphoreFeatures;
import io.gpusync.bindings.vulkan.VkQueueFamilyProperties;
import io.gpusync.bindings.vulkan.VkSubmitInfo;
import io.gpusync.bindings.vulkan.VkTimelineSemaphoreSubmitInfo;
import io.gpusync.bindings.vulkan.Vulkan;
import io.gpusync.vulkan.VulkanDevice;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

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
 * release's {@code vkDeviceWaitIdle} is the only wait, and it runs on a virtual thread of this producer's own (never
 * on the thread that drops the last hold, which may be a driver thread, an event loop or the cleaner).
 *
 * <p><b>Lifetime.</b> {@link #close()} (idempotent) closes {@link #device()}; the {@code VkDevice} and
 * {@code VkInstance} are destroyed — after {@code vkDeviceWaitIdle} — once every waiter minted from the
 * device is also closed (or unreachable) and no wait is in progress, so a point can never outlive its
 * device. Submitted work must be able to complete (a submission waiting on a value nobody signals would make
 * that idle-wait hang). A semaphore or fence that gpusync owns (created or adopted through {@link #device()})
 * and that a submission here refers to is held until that submission has completed, even if its last waiter is
 * closed first ({@link VulkanDevice#submit}); a borrowed one is the caller's to keep alive until then. It uses only
 * {@code gpusync-vulkan}'s public API and the Vulkan bindings.
 */
public final class VulkanContext implements AutoCloseable {
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
        this.device = VulkanDevice.wrap(instance, device);
        // the device is destroyed once gpusync has let go of it, on a virtual thread of its own: never on the thread
        // that dropped the last hold, and no platform thread that an application's thread accounting would see
        this.device.whenReleased().thenRunAsync(new DestroyDeviceAndInstance(instance, device),
                task -> Thread.ofVirtual().name("gpusync-test-vulkan-destroy").start(task));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pQueue = arena.allocate(ValueLayout.ADDRESS);
            Vulkan.vkGetDeviceQueue(device, queueFamilyIndex, 0, pQueue);
            this.queue = pQueue.get(ValueLayout.ADDRESS, 0);
        }
    }

    /**
     * Creates an instance (API 1.2), picks a device with timeline semaphores and creates it with one queue.
     *
     * @throws SyncNotSupportedException if there is no Vulkan loader, no driver, or no device with Vulkan 1.2
     *                                   timeline semaphores
     * @throws io.gpusync.SyncException  on any other driver failure
     */
    public static VulkanContext create() {
        VkChecks.requireLoader();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment version = arena.allocate(ValueLayout.JAVA_INT);
            VkChecks.check(Vulkan.vkEnumerateInstanceVersion(version), "vkEnumerateInstanceVersion");
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
                        + "driver (" + VkChecks.name(r) + "); install one (e.g. mesa-vulkan-drivers) or set VK_DRIVER_FILES");
            }
            VkChecks.check(r, "vkCreateInstance");
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
        VkChecks.check(Vulkan.vkEnumeratePhysicalDevices(instance, count, MemorySegment.NULL), "vkEnumeratePhysicalDevices");
        int n = count.get(ValueLayout.JAVA_INT, 0);
        MemorySegment devices = arena.allocate(ValueLayout.ADDRESS, Math.max(1, n));
        VkChecks.check(Vulkan.vkEnumeratePhysicalDevices(instance, count, devices), "vkEnumeratePhysicalDevices");
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
        VkChecks.check(Vulkan.vkCreateDevice(pd, dci, MemorySegment.NULL, pDevice), "vkCreateDevice");
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
            synchronized (queueLock) { // Vulkan queues are externally synchronised
                device.submit(queue, 1, info, fence);
            }
        }
    }

    /** Closes {@link #device()}; see the class comment for when the device is destroyed. Idempotent. */
    @Override
    public void close() {
        device.close();
    }

    @Override
    public String toString() {
        return "VulkanContext[" + deviceName + ", " + device + "]";
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
