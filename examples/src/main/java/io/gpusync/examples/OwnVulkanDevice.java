package io.gpusync.examples;

import io.gpusync.SyncPoint;
import io.gpusync.reactor.GpuSync;
import io.gpusync.vulkan.VulkanDevice;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * README's "Vulkan from your own device", runnable: an application that creates its own {@code VkInstance} and
 * {@code VkDevice} (with the {@code timelineSemaphore} feature gpusync needs) and its own timeline semaphore,
 * hands them to gpusync only to wait ({@link VulkanDevice#wrap}, {@code borrowTimelineSemaphore}), and destroys
 * them itself once {@link VulkanDevice#whenReleased()} says gpusync has let go. The Vulkan calls are plain FFM
 * downcalls into the system loader, as an application without a Vulkan binding library would make them (an
 * LWJGL application passes {@code instance.address()} and {@code device.address()} the same way).
 *
 * <p>{@code main} runs it on the first physical device ({@code VK_DRIVER_FILES} picks the driver, e.g. Mesa's
 * lavapipe on a CPU). Not thread-safe: one run at a time per instance of the steps below.
 */
public final class OwnVulkanDevice {
    private static final int VK_SUCCESS = 0;
    private static final int STRUCTURE_TYPE_APPLICATION_INFO = 0;
    private static final int STRUCTURE_TYPE_INSTANCE_CREATE_INFO = 1;
    private static final int STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO = 2;
    private static final int STRUCTURE_TYPE_DEVICE_CREATE_INFO = 3;
    private static final int STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO = 9;
    private static final int STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES = 1_000_207_000;
    private static final int STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO = 1_000_207_002;
    private static final int SEMAPHORE_TYPE_TIMELINE = 1;
    private static final int API_VERSION_1_2 = (1 << 22) | (2 << 12);

    private final Linker linker = Linker.nativeLinker();
    private final SymbolLookup vulkan = SymbolLookup.libraryLookup("libvulkan.so.1", Arena.global());

    private OwnVulkanDevice() {
    }

    /** What one run saw. */
    public record Report(String device, long counterAfterSignal, boolean releasedBeforeClose, boolean released) {
    }

    public static void main(String[] args) throws Exception {
        System.out.println(run());
    }

    /** Creates the application's own instance, device and timeline, waits through gpusync, destroys them. */
    public static Report run() throws Exception {
        return new OwnVulkanDevice().runOnce();
    }

    private Report runOnce() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            // --- the application's own Vulkan objects ---
            MemorySegment instance = createInstance(arena);
            MemorySegment physical = firstPhysicalDevice(arena, instance);
            MemorySegment device = createDeviceWithTimelineSemaphores(arena, physical);
            long timeline = createTimelineSemaphore(arena, device);

            // --- gpusync waits on them ---
            VulkanDevice gpusync = VulkanDevice.wrap(instance, device);
            SyncPoint.Vulkan frameDone = gpusync.borrowTimelineSemaphore(timeline, 1);
            // stands in for the GPU: a queue submission that signals the timeline to 1
            reactor.core.scheduler.Schedulers.parallel()
                    .schedule(() -> gpusync.hostSignal(timeline, 1), 20, TimeUnit.MILLISECONDS);
            GpuSync.await(frameDone, Duration.ofSeconds(10)).block();
            long counter = gpusync.counterValue(timeline);

            // --- tear-down: close gpusync's handles, wait until it has let go, then destroy ---
            boolean releasedEarly = gpusync.whenReleased().toCompletableFuture().isDone();
            frameDone.waiter().close();
            gpusync.close();
            gpusync.whenReleased().toCompletableFuture().get(30, TimeUnit.SECONDS);
            call("vkDestroySemaphore", FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG, ADDRESS),
                    device, timeline, MemorySegment.NULL);
            call("vkDestroyDevice", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS), device, MemorySegment.NULL);
            call("vkDestroyInstance", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS), instance, MemorySegment.NULL);
            return new Report("VkDevice 0x" + Long.toHexString(device.address()), counter, releasedEarly, true);
        }
    }

    private MemorySegment createInstance(Arena arena) throws Exception {
        MemorySegment app = arena.allocate(48, 8); // VkApplicationInfo
        app.set(JAVA_INT, 0, STRUCTURE_TYPE_APPLICATION_INFO);
        app.set(ADDRESS, 16, arena.allocateFrom("own-vulkan-device"));
        app.set(JAVA_INT, 44, API_VERSION_1_2);
        MemorySegment info = arena.allocate(64, 8); // VkInstanceCreateInfo
        info.set(JAVA_INT, 0, STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
        info.set(ADDRESS, 24, app);
        MemorySegment out = arena.allocate(ADDRESS);
        check("vkCreateInstance", (int) call("vkCreateInstance",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), info, MemorySegment.NULL, out));
        return out.get(ADDRESS, 0);
    }

    private MemorySegment firstPhysicalDevice(Arena arena, MemorySegment instance) throws Exception {
        MemorySegment count = arena.allocate(JAVA_INT);
        count.set(JAVA_INT, 0, 1);
        MemorySegment devices = arena.allocate(ADDRESS);
        int result = (int) call("vkEnumeratePhysicalDevices", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS),
                instance, count, devices);
        if (result < 0 || count.get(JAVA_INT, 0) == 0) {
            throw new IllegalStateException("no Vulkan physical device (vkEnumeratePhysicalDevices: " + result + ")");
        }
        return devices.get(ADDRESS, 0);
    }

    /** A device with one queue of family 0 and the timelineSemaphore feature enabled (what gpusync needs). */
    private MemorySegment createDeviceWithTimelineSemaphores(Arena arena, MemorySegment physical) throws Exception {
        MemorySegment timelineFeature = arena.allocate(24, 8); // VkPhysicalDeviceTimelineSemaphoreFeatures
        timelineFeature.set(JAVA_INT, 0, STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES);
        timelineFeature.set(JAVA_INT, 16, 1); // timelineSemaphore = VK_TRUE
        MemorySegment priority = arena.allocateFrom(ValueLayout.JAVA_FLOAT, 1f);
        MemorySegment queue = arena.allocate(40, 8); // VkDeviceQueueCreateInfo
        queue.set(JAVA_INT, 0, STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
        queue.set(JAVA_INT, 20, 0); // queueFamilyIndex
        queue.set(JAVA_INT, 24, 1); // queueCount
        queue.set(ADDRESS, 32, priority);
        MemorySegment info = arena.allocate(72, 8); // VkDeviceCreateInfo
        info.set(JAVA_INT, 0, STRUCTURE_TYPE_DEVICE_CREATE_INFO);
        info.set(ADDRESS, 8, timelineFeature); // pNext: the feature gpusync needs
        info.set(JAVA_INT, 20, 1);
        info.set(ADDRESS, 24, queue);
        MemorySegment out = arena.allocate(ADDRESS);
        check("vkCreateDevice", (int) call("vkCreateDevice",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS), physical, info, MemorySegment.NULL, out));
        return out.get(ADDRESS, 0);
    }

    private long createTimelineSemaphore(Arena arena, MemorySegment device) throws Exception {
        MemorySegment type = arena.allocate(32, 8); // VkSemaphoreTypeCreateInfo
        type.set(JAVA_INT, 0, STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
        type.set(JAVA_INT, 16, SEMAPHORE_TYPE_TIMELINE);
        type.set(JAVA_LONG, 24, 0L); // initialValue
        MemorySegment info = arena.allocate(24, 8); // VkSemaphoreCreateInfo
        info.set(JAVA_INT, 0, STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO);
        info.set(ADDRESS, 8, type);
        MemorySegment out = arena.allocate(JAVA_LONG);
        check("vkCreateSemaphore", (int) call("vkCreateSemaphore",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS), device, info, MemorySegment.NULL, out));
        return out.get(JAVA_LONG, 0);
    }

    private Object call(String function, FunctionDescriptor signature, Object... args) throws Exception {
        MethodHandle handle = linker.downcallHandle(vulkan.findOrThrow(function), signature);
        try {
            return handle.invokeWithArguments(args);
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(function, t);
        }
    }

    private static void check(String function, int result) {
        if (result != VK_SUCCESS) {
            throw new IllegalStateException(function + " failed: VkResult " + result);
        }
    }
}
