package io.gpusync.vulkan;

/**
 * Who destroys a Vulkan handle handed to a {@link VulkanDevice} factory.
 *
 * <ul>
 *   <li>{@link #OWNED}: gpusync adopts the handle and destroys it ({@code vkDestroySemaphore} /
 *       {@code vkDestroyFence}) exactly once, when the waiter minted for it and every waiter rebound from
 *       it are closed (or unreachable) and no wait on it is in progress. Adopt a handle at most once;
 *       mint further points on it with {@link io.gpusync.SyncPoint#withValue}.</li>
 *   <li>{@link #BORROWED}: the caller keeps the handle and destroys it, after closing every waiter on it
 *       and after every wait on it has returned; gpusync never destroys it.</li>
 * </ul>
 * Ownership is fixed when the waiter is minted; releasing never blocks on the GPU and runs on the thread
 * that drops the last hold (on gpusync's housekeeping thread when that is a driver's callback thread or
 * the cleaner, for forgotten waiters).
 */
public enum Ownership {
    OWNED, BORROWED
}
