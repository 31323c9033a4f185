/**
 * The Vulkan backend: {@link io.gpusync.SyncPoint.Vulkan} points on timeline semaphores (blocking waits in
 * {@code vkWaitSemaphores}, counter probes, one wait-any {@link io.gpusync.spi.WaitSet} per device), binary
 * semaphores (GPU-side waits; CPU waits through a companion fence) and fence waiters, minted from raw
 * handles by {@link io.gpusync.vulkan.VulkanDevice}; plus {@link io.gpusync.vulkan.VulkanProducers.VulkanContext}, an owned
 * instance/device/queue that acts as a producer for demos, benchmarks and tests.
 *
 * <p>All entry points go through the jextract bindings, after {@code NativeLibraries.require}: a machine
 * without {@code libvulkan.so.1} gets {@link io.gpusync.SyncNotSupportedException}. Device-level functions
 * are resolved per device with {@code vkGetDeviceProcAddr}. Error mapping: {@code VK_TIMEOUT} →
 * {@link io.gpusync.SyncTimeoutException} (naming the handle, value and timeout),
 * {@code VK_ERROR_DEVICE_LOST} → {@link io.gpusync.DeviceLostException} (sticky per device), any other
 * failure → {@link io.gpusync.SyncBackendException} with the code and its name.
 */
package io.gpusync.vulkan;
