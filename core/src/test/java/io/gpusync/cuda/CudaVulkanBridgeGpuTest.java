package io.gpusync.cuda;

import static io.gpusync.cuda.CudaTestSupport.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.CUuuid;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.bindings.vulkan.PFN_vkCreateSemaphore;
import io.gpusync.bindings.vulkan.PFN_vkDestroySemaphore;
import io.gpusync.bindings.vulkan.PFN_vkGetSemaphoreFdKHR;
import io.gpusync.bindings.vulkan.PFN_vkSignalSemaphore;
import io.gpusync.bindings.vulkan.PFN_vkWaitSemaphores;
import io.gpusync.bindings.vulkan.VkApplicationInfo;
import io.gpusync.bindings.vulkan.VkDeviceCreateInfo;
import io.gpusync.bindings.vulkan.VkDeviceQueueCreateInfo;
import io.gpusync.bindings.vulkan.VkExportSemaphoreCreateInfo;
import io.gpusync.bindings.vulkan.VkInstanceCreateInfo;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceIDProperties;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceProperties2;
import io.gpusync.bindings.vulkan.VkPhysicalDeviceTimelineSemaphoreFeatures;
import io.gpusync.bindings.vulkan.VkSemaphoreCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreGetFdInfoKHR;
import io.gpusync.bindings.vulkan.VkSemaphoreSignalInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreTypeCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreWaitInfo;
import io.gpusync.bindings.vulkan.Vulkan;
import io.gpusync.internal.NativeLibraries;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Vulkan → CUDA → Vulkan through an exported timeline semaphore, with nothing but the raw Vulkan bindings on the
 * Vulkan side (self-contained: no dependency on gpusync's Vulkan package): a Vulkan timeline semaphore exported
 * as an opaque fd is imported into CUDA; a CUDA stream waits for Vulkan's value 1 before advancing a host
 * timeline and signalling value 2, which Vulkan then waits for.
 */
@Tag("gpu")
class CudaVulkanBridgeGpuTest {

    @Test
    void vulkanSignalsCudaAndCudaSignalsVulkan() {
        assumeCuda();
        assumeTrue(NativeLibraries.isAvailable("libvulkan.so.1"), "libvulkan.so.1 is not installed");
        MemorySegment ctx = primaryContext();
        try (Arena arena = Arena.ofConfined()) {
            // --- Vulkan instance and the physical device that is CUDA device 0 (by UUID) ---
            MemorySegment app = VkApplicationInfo.allocate(arena);
            VkApplicationInfo.sType(app, Vulkan.VK_STRUCTURE_TYPE_APPLICATION_INFO());
            VkApplicationInfo.apiVersion(app, Vulkan.VK_API_VERSION_1_2());
            MemorySegment ici = VkInstanceCreateInfo.allocate(arena);
            VkInstanceCreateInfo.sType(ici, Vulkan.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO());
            VkInstanceCreateInfo.pApplicationInfo(ici, app);
            MemorySegment pInstance = arena.allocate(ValueLayout.ADDRESS);
            int vr = Vulkan.vkCreateInstance(ici, MemorySegment.NULL, pInstance);
            assumeTrue(vr == Vulkan.VK_SUCCESS(), "no Vulkan instance (VkResult " + vr + ")");
            MemorySegment instance = pInstance.get(ValueLayout.ADDRESS, 0);
            try {
                byte[] cudaUuid = new byte[16];
                MemorySegment uuid = CUuuid.allocate(arena);
                check(Cuda.cuDeviceGetUuid_v2(uuid, 0), "cuDeviceGetUuid_v2");
                MemorySegment.copy(uuid, ValueLayout.JAVA_BYTE, 0, cudaUuid, 0, 16);
                MemorySegment physical = findPhysicalDevice(arena, instance, cudaUuid);
                assumeTrue(physical != null, "no Vulkan physical device with CUDA device 0's UUID");

                // --- device with timeline semaphores + VK_KHR_external_semaphore_fd ---
                MemorySegment timelineFeatures = VkPhysicalDeviceTimelineSemaphoreFeatures.allocate(arena);
                VkPhysicalDeviceTimelineSemaphoreFeatures.sType(timelineFeatures,
                        Vulkan.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES());
                VkPhysicalDeviceTimelineSemaphoreFeatures.timelineSemaphore(timelineFeatures, Vulkan.VK_TRUE());
                MemorySegment qci = VkDeviceQueueCreateInfo.allocate(arena);
                VkDeviceQueueCreateInfo.sType(qci, Vulkan.VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO());
                VkDeviceQueueCreateInfo.queueFamilyIndex(qci, 0);
                VkDeviceQueueCreateInfo.queueCount(qci, 1);
                VkDeviceQueueCreateInfo.pQueuePriorities(qci, arena.allocateFrom(ValueLayout.JAVA_FLOAT, 1.0f));
                MemorySegment dci = VkDeviceCreateInfo.allocate(arena);
                VkDeviceCreateInfo.sType(dci, Vulkan.VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO());
                VkDeviceCreateInfo.pNext(dci, timelineFeatures);
                VkDeviceCreateInfo.queueCreateInfoCount(dci, 1);
                VkDeviceCreateInfo.pQueueCreateInfos(dci, qci);
                VkDeviceCreateInfo.enabledExtensionCount(dci, 1);
                VkDeviceCreateInfo.ppEnabledExtensionNames(dci, arena.allocateFrom(ValueLayout.ADDRESS,
                        Vulkan.VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME()));
                MemorySegment pDevice = arena.allocate(ValueLayout.ADDRESS);
                vr = Vulkan.vkCreateDevice(physical, dci, MemorySegment.NULL, pDevice);
                assertThat(vr).as("vkCreateDevice").isEqualTo(Vulkan.VK_SUCCESS());
                MemorySegment device = pDevice.get(ValueLayout.ADDRESS, 0);
                try {
                    bridge(arena, device, ctx);
                } finally {
                    Vulkan.vkDestroyDevice(device, MemorySegment.NULL);
                }
            } finally {
                Vulkan.vkDestroyInstance(instance, MemorySegment.NULL);
            }
        }
    }

    private static void bridge(Arena arena, MemorySegment device, MemorySegment ctx) {
        MemorySegment createSemaphore = proc(arena, device, "vkCreateSemaphore");
        MemorySegment destroySemaphore = proc(arena, device, "vkDestroySemaphore");
        MemorySegment getFd = proc(arena, device, "vkGetSemaphoreFdKHR");
        MemorySegment signal = proc(arena, device, "vkSignalSemaphore");
        MemorySegment waitSemaphores = proc(arena, device, "vkWaitSemaphores");

        MemorySegment export = VkExportSemaphoreCreateInfo.allocate(arena);
        VkExportSemaphoreCreateInfo.sType(export, Vulkan.VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO());
        VkExportSemaphoreCreateInfo.handleTypes(export, Vulkan.VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT());
        MemorySegment type = VkSemaphoreTypeCreateInfo.allocate(arena);
        VkSemaphoreTypeCreateInfo.sType(type, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO());
        VkSemaphoreTypeCreateInfo.pNext(type, export);
        VkSemaphoreTypeCreateInfo.semaphoreType(type, Vulkan.VK_SEMAPHORE_TYPE_TIMELINE());
        VkSemaphoreTypeCreateInfo.initialValue(type, 0);
        MemorySegment sci = VkSemaphoreCreateInfo.allocate(arena);
        VkSemaphoreCreateInfo.sType(sci, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO());
        VkSemaphoreCreateInfo.pNext(sci, type);
        MemorySegment pSem = arena.allocate(ValueLayout.ADDRESS);
        assertThat(PFN_vkCreateSemaphore.invoke(createSemaphore, device, sci, MemorySegment.NULL, pSem))
                .as("vkCreateSemaphore(timeline, exportable)").isEqualTo(Vulkan.VK_SUCCESS());
        MemorySegment semaphore = pSem.get(ValueLayout.ADDRESS, 0);
        try {
            MemorySegment gfi = VkSemaphoreGetFdInfoKHR.allocate(arena);
            VkSemaphoreGetFdInfoKHR.sType(gfi, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR());
            VkSemaphoreGetFdInfoKHR.semaphore(gfi, semaphore);
            VkSemaphoreGetFdInfoKHR.handleType(gfi, Vulkan.VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT());
            MemorySegment pFd = arena.allocate(ValueLayout.JAVA_INT);
            assertThat(PFN_vkGetSemaphoreFdKHR.invoke(getFd, device, gfi, pFd)).as("vkGetSemaphoreFdKHR")
                    .isEqualTo(Vulkan.VK_SUCCESS());
            int fd = pFd.get(ValueLayout.JAVA_INT, 0);

            push(ctx);
            MemorySegment stream = stream();
            try (CudaExternalSemaphore imported = CudaExternalSemaphore.importTimelineFd(fd, ctx);
                 CudaHostTimeline timeline = CudaHostTimeline.create(ctx)) {
                imported.waitAsync(stream, 1);          // CUDA waits for Vulkan's 1
                SyncPoint.Cuda afterVulkan = timeline.advance(stream);
                imported.signalAsync(stream, 2);        // then CUDA signals 2 for Vulkan

                sleep(50);
                assertThat(afterVulkan.isSignaled()).as("CUDA is held by the Vulkan semaphore").isFalse();

                MemorySegment ssi = VkSemaphoreSignalInfo.allocate(arena);
                VkSemaphoreSignalInfo.sType(ssi, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO());
                VkSemaphoreSignalInfo.semaphore(ssi, semaphore);
                VkSemaphoreSignalInfo.value(ssi, 1);
                assertThat(PFN_vkSignalSemaphore.invoke(signal, device, ssi)).isEqualTo(Vulkan.VK_SUCCESS());

                afterVulkan.await(Duration.ofSeconds(10));

                MemorySegment wi = VkSemaphoreWaitInfo.allocate(arena);
                VkSemaphoreWaitInfo.sType(wi, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO());
                VkSemaphoreWaitInfo.semaphoreCount(wi, 1);
                VkSemaphoreWaitInfo.pSemaphores(wi, arena.allocateFrom(ValueLayout.ADDRESS, semaphore));
                VkSemaphoreWaitInfo.pValues(wi, arena.allocateFrom(ValueLayout.JAVA_LONG, 2L));
                assertThat(PFN_vkWaitSemaphores.invoke(waitSemaphores, device, wi, 10_000_000_000L))
                        .as("Vulkan sees CUDA's signal of 2").isEqualTo(Vulkan.VK_SUCCESS());
                sync(stream);

                // --- the CPU awaits the imported semaphore itself: a SyncPoint.Cuda over it ---
                MemorySegment own = stream();
                try {
                    SyncPoint.Cuda atThree = imported.point(own, 3);
                    assertThat(atThree.waiter()).isInstanceOf(CudaExternalSemaphoreWaiter.class);
                    assertThat(atThree.value()).hasValue(3);
                    assertThat(atThree.isSignaled()).as("Vulkan has not signalled 3").isFalse();
                    assertThatThrownBy(() -> atThree.await(Duration.ofMillis(20)))
                            .isInstanceOf(io.gpusync.SyncTimeoutException.class);
                    SyncPoint atFour = atThree.withValue(4); // a new wait at 4, nothing of 3 carried over
                    VkSemaphoreSignalInfo.value(ssi, 3);
                    assertThat(PFN_vkSignalSemaphore.invoke(signal, device, ssi)).isEqualTo(Vulkan.VK_SUCCESS());
                    atThree.await(Duration.ofSeconds(10));
                    assertThat(atThree.isSignaled()).isTrue();
                    assertThat(atFour.isSignaled()).as("4 is not signalled yet").isFalse();
                    VkSemaphoreSignalInfo.value(ssi, 4);
                    assertThat(PFN_vkSignalSemaphore.invoke(signal, device, ssi)).isEqualTo(Vulkan.VK_SUCCESS());
                    atFour.await(Duration.ofSeconds(10));
                    atThree.waiter().close();
                    atFour.waiter().close();
                    sync(own);
                } finally {
                    check(Cuda.cuStreamDestroy_v2(own), "cuStreamDestroy");
                }
            } finally {
                check(Cuda.cuStreamDestroy_v2(stream), "cuStreamDestroy");
                pop();
            }
        } finally {
            PFN_vkDestroySemaphore.invoke(destroySemaphore, device, semaphore, MemorySegment.NULL);
        }
    }

    private static MemorySegment findPhysicalDevice(Arena arena, MemorySegment instance, byte[] uuid) {
        MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
        Vulkan.vkEnumeratePhysicalDevices(instance, count, MemorySegment.NULL);
        int n = count.get(ValueLayout.JAVA_INT, 0);
        MemorySegment devices = arena.allocate(ValueLayout.ADDRESS, Math.max(1, n));
        Vulkan.vkEnumeratePhysicalDevices(instance, count, devices);
        for (int i = 0; i < n; i++) {
            MemorySegment pd = devices.getAtIndex(ValueLayout.ADDRESS, i);
            MemorySegment id = VkPhysicalDeviceIDProperties.allocate(arena);
            VkPhysicalDeviceIDProperties.sType(id, Vulkan.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES());
            MemorySegment props = VkPhysicalDeviceProperties2.allocate(arena);
            VkPhysicalDeviceProperties2.sType(props, Vulkan.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2());
            VkPhysicalDeviceProperties2.pNext(props, id);
            Vulkan.vkGetPhysicalDeviceProperties2(pd, props);
            byte[] vkUuid = VkPhysicalDeviceIDProperties.deviceUUID(id).toArray(ValueLayout.JAVA_BYTE);
            if (Arrays.equals(vkUuid, uuid)) {
                return pd;
            }
        }
        return null;
    }

    private static MemorySegment proc(Arena arena, MemorySegment device, String name) {
        MemorySegment fn = Vulkan.vkGetDeviceProcAddr(device, arena.allocateFrom(name));
        assertThat(fn).as(name).isNotEqualTo(MemorySegment.NULL);
        return fn;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
