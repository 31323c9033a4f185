package io.gpusync.bindings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusync.bindings.vulkan.PFN_vkGetSemaphoreCounterValue;
import io.gpusync.bindings.vulkan.VkApplicationInfo;
import io.gpusync.bindings.vulkan.VkInstanceCreateInfo;
import io.gpusync.bindings.vulkan.Vulkan;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class VulkanSmokeTest {

    static boolean loaderPresent() {
        try {
            SymbolLookup.libraryLookup("libvulkan.so.1", Arena.global());
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    @Test
    void enumerateInstanceVersionAndCreateInstance() {
        assumeTrue(loaderPresent(), "libvulkan.so.1 not installed");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment version = arena.allocate(ValueLayout.JAVA_INT);
            assertThat(Vulkan.vkEnumerateInstanceVersion(version)).isEqualTo(Vulkan.VK_SUCCESS());
            int v = version.get(ValueLayout.JAVA_INT, 0);
            assertThat(v).isGreaterThanOrEqualTo(Vulkan.VK_API_VERSION_1_0());

            MemorySegment app = VkApplicationInfo.allocate(arena);
            VkApplicationInfo.sType(app, Vulkan.VK_STRUCTURE_TYPE_APPLICATION_INFO());
            VkApplicationInfo.pApplicationName(app, arena.allocateFrom("gpusync-bindings-test"));
            VkApplicationInfo.apiVersion(app, Vulkan.VK_API_VERSION_1_2());
            MemorySegment ci = VkInstanceCreateInfo.allocate(arena);
            VkInstanceCreateInfo.sType(ci, Vulkan.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO());
            VkInstanceCreateInfo.pApplicationInfo(ci, app);
            MemorySegment pInstance = arena.allocate(ValueLayout.ADDRESS);
            int r = Vulkan.vkCreateInstance(ci, MemorySegment.NULL, pInstance);
            // lavapipe is expected here (VK_DRIVER_FILES set by surefire); without any ICD the loader says so
            assumeTrue(r != Vulkan.VK_ERROR_INCOMPATIBLE_DRIVER(), "no Vulkan ICD");
            assertThat(r).isEqualTo(Vulkan.VK_SUCCESS());
            MemorySegment instance = pInstance.get(ValueLayout.ADDRESS, 0);
            try {
                MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
                assertThat(Vulkan.vkEnumeratePhysicalDevices(instance, count, MemorySegment.NULL)).isEqualTo(Vulkan.VK_SUCCESS());
                // device-level entry point through a PFN pointer: resolvable via vkGetInstanceProcAddr
                MemorySegment fn = Vulkan.vkGetInstanceProcAddr(instance, arena.allocateFrom("vkGetSemaphoreCounterValue"));
                assertThat(fn).isNotEqualTo(MemorySegment.NULL);
                assertThat(PFN_vkGetSemaphoreCounterValue.descriptor().argumentLayouts()).hasSize(3);
            } finally {
                Vulkan.vkDestroyInstance(instance, MemorySegment.NULL);
            }
        }
    }
}
