package io.gpusync;

/**
 * The type of a Vulkan semaphore, as declared by the producer. A {@link #BINARY} semaphore carries no
 * value (the value of its {@link SyncPoint.Vulkan} point is ignored) and must never be probed with
 * {@code vkGetSemaphoreCounterValue}, whose result is undefined for binary semaphores.
 */
public enum VulkanSemaphoreKind {
    TIMELINE, BINARY
}
