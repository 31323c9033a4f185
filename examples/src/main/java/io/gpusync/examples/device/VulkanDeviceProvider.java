package io.gpusync.examples.device;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceProperties;
import io.gpusync.bindings.vulkan.Vulkan;
import io.gpusync.test.vulkan.VulkanContext;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Vulkan: each unit of work is an empty queue submission that signals the next value of one timeline
 * semaphore, and the point is that value (awaited by the device's {@code vkWaitSemaphores(WAIT_ANY)}
 * thread, the {@code WAIT_SET} path). Neither {@code size} nor {@code ms} applies: the submission is empty.
 */
public final class VulkanDeviceProvider implements DeviceProvider {

    @Override
    public String backend() {
        return "vulkan";
    }

    @Override
    public Device open(DeviceOptions options) {
        VulkanContext vk = VulkanContext.create();
        try {
            int type = deviceType(vk.physicalDevice());
            boolean software = type == Vulkan.VK_PHYSICAL_DEVICE_TYPE_CPU();
            if (software && !options.allowSoftware()) {
                throw new SyncNotSupportedException(BackendKind.VULKAN, "the Vulkan device, " + vk.deviceName()
                        + ", is a CPU implementation (use --backend vulkan to run on it anyway)");
            }
            SyncPoint.Vulkan timeline = vk.device().createTimelineSemaphore(0);
            return QueueSignalDevice.onCounter("vulkan", "Vulkan " + (software ? "CPU implementation " : "")
                    + vk.deviceName() + ": empty queue submissions signalling one timeline semaphore", timeline,
                    v -> vk.signalOnQueue(timeline.semaphore(), v), vk::close);
        } catch (RuntimeException | Error e) {
            vk.close();
            throw e;
        }
    }

    private static int deviceType(MemorySegment physicalDevice) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment props = VkPhysicalDeviceProperties.allocate(a);
            Vulkan.vkGetPhysicalDeviceProperties(physicalDevice, props);
            return VkPhysicalDeviceProperties.deviceType(props);
        }
    }
}
