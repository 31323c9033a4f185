package io.gpusync.vulkan;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import io.gpusync.test.vulkan.VulkanContext;

/** A test class on one real lavapipe device, opened before its tests and closed after them (see {@link Lavapipe}). */
abstract class OnLavapipe {
    static VulkanContext ctx;
    static VulkanDevice device;

    @BeforeAll
    static void openLavapipe() {
        ctx = Lavapipe.context();
        device = ctx.device();
    }

    @AfterAll
    static void closeLavapipe() {
        if (ctx != null) {
            ctx.close();
            ctx = null;
        }
    }
}
