/**
 * The Vulkan backend: {@link io.gpusync.SyncPoint.Vulkan} points on timeline semaphores (blocking waits in
 * {@code vkWaitSemaphores}, counter probes, one wait-any {@link io.gpusync.spi.WaitSet} per device), binary
 * semaphores (GPU-side waits; CPU waits through a companion fence) and fence waiters, minted from raw
 * handles by {@link io.gpusync.vulkan.VulkanDevice}, which also submits batches that refer to handles it owns
 * ({@link io.gpusync.vulkan.VulkanDevice#submit}). The producers of Vulkan work for tests, benchmarks and demos
 * live in the test kit ({@code gpusync-test}: {@code io.gpusync.test.vulkan}).
 *
 * <p>All entry points go through the jextract bindings, after {@code NativeLibraries.require}: a machine
 * without {@code libvulkan.so.1} gets {@link io.gpusync.SyncNotSupportedException}. Device-level functions
 * are resolved per device with {@code vkGetDeviceProcAddr}. Error mapping: {@code VK_TIMEOUT} →
 * {@link io.gpusync.SyncTimeoutException} (naming the handle, value and timeout),
 * {@code VK_ERROR_DEVICE_LOST} → {@link io.gpusync.DeviceLostException} (sticky per device), any other
 * failure → {@link io.gpusync.SyncBackendException} with the code and its name.
 *
 * <p><b>Native boundary.</b> Every place where gpusync hands the driver a handle or pointer that may outlive the
 * call, or destroys what the driver may still use, and why the free comes after the driver's last use:
 * <table>
 *   <caption>Vulkan: what the driver keeps, who owns it, what keeps it alive</caption>
 *   <tr><th>site</th><th>what, and whose</th><th>why the free comes after the driver's last use</th></tr>
 *   <tr><td>owned {@code VkSemaphore}/{@code VkFence} ({@code adopt…}, {@code createTimelineSemaphore},
 *       {@code createFence} of {@link io.gpusync.vulkan.VulkanDevice})</td><td>gpusync</td><td>destroyed
 *       ({@code HandleRelease}, on gpusync's housekeeping thread: the destroy may block on a driver lock, and never
 *       on the thread of a user's {@code close()}) when the anchor's last hold drops. Holds: every waiter; every wait
 *       and probe for its
 *       whole driver call ({@code AnchoredWaiter.pinned}; a wait set's {@code vkWaitSemaphores} pins every
 *       member); {@code hostSignal}/{@code counterValue} for the call ({@code DeviceState.holdOwned}: the wait a
 *       signal ends may close the last waiter); and a {@link io.gpusync.vulkan.VulkanDevice#submit}
 *       batch that refers to it, until an empty batch behind it has signalled a private timeline
 *       ({@code SubmissionHolds}: Vulkan forbids destroying a handle a pending batch refers to). The application's
 *       own submissions (other than through {@code submit}) and {@code vkSignalSemaphore}s on an adopted handle
 *       are the application's: keep a waiter
 *       open until they have completed. A borrowed handle is the caller's</td></tr>
 *   <tr><td>wake-up semaphores ({@code DeviceWaitSet}, {@code WakeSemaphore}), the retirement semaphore of
 *       {@code SubmissionHolds}</td><td>gpusync, per device</td><td>destroyed by the device state's release,
 *       which runs only when no wait is in progress and no submission hold is pending (each holds the
 *       device)</td></tr>
 *   <tr><td>arrays and structs of {@code vkWaitSemaphores}, {@code vkSignalSemaphore}, {@code vkQueueSubmit}
 *       </td><td>confined arenas</td><td>read during the call ({@code vkQueueSubmit} copies its batches)</td></tr>
 *   <tr><td>{@code VkDevice}/{@code VkInstance}</td><td>the application</td><td>destroy them only once every view,
 *       waiter, owned handle and submission hold is gone: {@code VulkanDevice.whenReleased()} says when</td></tr>
 *   <tr><td>out-parameters ({@code DeviceFunctions}' per-thread scratch)</td><td>gpusync</td><td>never escape
 *       a call</td></tr>
 * </table>
 */
package io.gpusync.vulkan;
