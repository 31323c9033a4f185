package io.gpusync.vulkan;

import io.gpusync.SyncNotSupportedException;
import org.junit.jupiter.api.Assumptions;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import io.gpusync.test.vulkan.VulkanContext;

/**
 * Test support: a real Vulkan device on lavapipe (Surefire pins the ICD with {@code VK_DRIVER_FILES}).
 * Tests skip, with the reason printed, only when there is no Vulkan driver at all.
 */
final class Lavapipe {
    private static final ThreadFactory PLATFORM = Thread.ofPlatform().daemon().name("vk-test-", 0).factory();

    private Lavapipe() {
    }

    /** A fresh owned instance + device + queue; the test closes it. */
    static VulkanContext context() {
        try {
            return VulkanContext.create();
        } catch (SyncNotSupportedException e) {
            System.out.println("[skipped] no Vulkan driver: " + e.getMessage());
            Assumptions.assumeTrue(false, "no Vulkan driver: " + e.getMessage());
            throw e;
        }
    }

    /** Runs {@code task} on a new platform thread (native waits pin virtual threads). */
    static <T> CompletableFuture<T> onPlatformThread(Callable<T> task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        PLATFORM.newThread(() -> {
            try {
                f.complete(task.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        }).start();
        return f;
    }

    static CompletableFuture<Void> onPlatformThread(Runnable task) {
        return onPlatformThread(() -> {
            task.run();
            return null;
        });
    }

    /** Gives a thread that is about to block time to get into the driver. */
    static void settle() {
        try {
            Thread.sleep(Duration.ofMillis(50));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

}
