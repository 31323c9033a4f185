package io.gpusync.examples.device;

import io.gpusync.BackendKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceProperties;
import io.gpusync.bindings.vulkan.Vulkan;
import io.gpusync.vulkan.VulkanProducers.VulkanContext;

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
            return new VkDevice(vk, software);
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

    private static final class VkDevice implements Device {
        private final VulkanContext vk;
        private final boolean software;
        private final SyncPoint.Vulkan timeline; // value 0; keeps the semaphore alive while the device is open
        private final SubmissionLog log = new SubmissionLog();
        private long value;
        private boolean closed;

        VkDevice(VulkanContext vk, boolean software) {
            this.vk = vk;
            this.software = software;
            this.timeline = vk.device().createTimelineSemaphore(0);
        }

        @Override
        public String backend() {
            return "vulkan";
        }

        @Override
        public String description() {
            return "Vulkan " + (software ? "CPU implementation " : "") + vk.deviceName()
                    + ": empty queue submissions signalling one timeline semaphore";
        }

        @Override
        public synchronized SyncPoint submit(Work work) {
            if (closed) {
                throw new SyncCancelledException("the Vulkan device is closed");
            }
            long v = ++value;
            long now = System.nanoTime();
            vk.signalOnQueue(timeline.semaphore(), v);
            SyncPoint point = timeline.withValue(v);
            log.submitted(point, now);
            return point;
        }

        @Override
        public java.util.OptionalLong oldestUnfinishedSubmission() {
            return log.oldestUnfinished();
        }

        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                timeline.waiter().close();
                vk.close();
            }
        }
    }
}
