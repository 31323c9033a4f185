package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.vulkan.Vulkan;
import io.gpusync.spi.WaitSetMember;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Error mapping. Device-loss tests each use a device of their own: on lavapipe a lost device stays lost.
 */
class VulkanErrorsTest {

    @Test
    void afterTheDriverLosesTheDeviceAProbeThrowsDeviceLostNeverFalse() {
        try (VulkanContext own = Lavapipe.context()) {
            VulkanDevice d = own.device();
            SyncPoint.Vulkan p = d.createTimelineSemaphore(5);
            SyncPoint p6 = p.withValue(6);
            try {
                // bypass hostSignal's guard: signalling a value ≤ the counter loses the device on lavapipe
                assertThat(d.state.fns.signalSemaphore(p.semaphore(), 5)).isEqualTo(Vulkan.VK_ERROR_DEVICE_LOST());
                assertThat(d.state.isLost()).isFalse(); // gpusync has not seen it yet: the driver must report it
                assertThatThrownBy(p6::isSignaled).isInstanceOf(DeviceLostException.class)
                        .hasMessageContaining("VK_ERROR_DEVICE_LOST")
                        .satisfies(e -> assertThat(((SyncException) e).kind()).isEqualTo(ErrorKind.FATAL));
                assertThat(d.state.isLost()).isTrue();
                assertThatThrownBy(p::isSignaled).isInstanceOf(DeviceLostException.class);
                assertThatThrownBy(() -> p6.await(Duration.ofSeconds(1))).isInstanceOf(DeviceLostException.class);
            } finally {
                p6.waiter().close();
                p.waiter().close();
            }
        }
    }

    @Test
    void afterTheDriverLosesTheDeviceEveryWaitThrowsDeviceLost() {
        try (VulkanContext own = Lavapipe.context()) {
            VulkanDevice d = own.device();
            SyncPoint.Vulkan p = d.createTimelineSemaphore(5);
            SyncPoint p6 = p.withValue(6);
            VulkanFenceWaiter fence = d.createFence(false);
            try {
                assertThat(d.state.fns.signalSemaphore(p.semaphore(), 4)).isEqualTo(Vulkan.VK_ERROR_DEVICE_LOST());
                assertThatThrownBy(() -> p6.await(SyncPoint.FOREVER)).isInstanceOf(DeviceLostException.class)
                        .hasMessageContaining("0x" + Long.toHexString(p.semaphore()));
                assertThatThrownBy(() -> d.waitSet().awaitAny(List.of((WaitSetMember) p6.waiter()), Duration.ofSeconds(1)))
                        .isInstanceOf(DeviceLostException.class);
                assertThatThrownBy(() -> d.hostSignal(p.semaphore(), 7)).isInstanceOf(DeviceLostException.class);
                assertThatThrownBy(() -> fence.await(Duration.ofSeconds(1))).isInstanceOf(DeviceLostException.class);
                assertThatThrownBy(fence::isSignaled).isInstanceOf(DeviceLostException.class);
                assertThatThrownBy(() -> own.signalOnQueue(p.semaphore(), 8)).isInstanceOf(DeviceLostException.class);
            } finally {
                fence.close();
                p6.waiter().close();
                p.waiter().close();
            }
        }
    }

    @Test
    void theDriverItselfReportsALostDeviceToAFreshWait() {
        try (VulkanContext own = Lavapipe.context()) {
            VulkanDevice d = own.device();
            SyncPoint.Vulkan p = d.createTimelineSemaphore(5);
            VulkanFenceWaiter fence = d.createFence(false);
            try {
                assertThat(d.state.fns.signalSemaphore(p.semaphore(), 1)).isEqualTo(Vulkan.VK_ERROR_DEVICE_LOST());
                assertThat(d.state.fns.waitForFence(fence.fence(), 0)).isEqualTo(Vulkan.VK_ERROR_DEVICE_LOST());
                assertThat(d.state.fns.waitSemaphore(p.semaphore(), 1, 0)).isEqualTo(Vulkan.VK_ERROR_DEVICE_LOST());
            } finally {
                fence.close();
                p.waiter().close();
            }
        }
    }

    @Test
    void nullHandlesAreRejectedWithAClearExceptionNotACrash() {
        assertThatThrownBy(() -> VulkanDevice.wrap(0L, 0L)).isInstanceOf(SyncInvalidArgumentException.class)
                .hasMessageContaining("VkDevice is VK_NULL_HANDLE");
        assertThatThrownBy(() -> VulkanDevice.wrap(MemorySegment.NULL, MemorySegment.NULL))
                .isInstanceOf(SyncInvalidArgumentException.class);
        try (VulkanContext own = Lavapipe.context()) {
            VulkanDevice d = own.device();
            assertThatThrownBy(() -> d.timelinePoint(0, 1, Ownership.BORROWED))
                    .isInstanceOf(SyncInvalidArgumentException.class).hasMessageContaining("VK_NULL_HANDLE");
            assertThatThrownBy(() -> d.binaryPoint(0, Ownership.OWNED)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThatThrownBy(() -> d.binaryPoint(1, 0, Ownership.OWNED)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThatThrownBy(() -> d.fenceWaiter(0, Ownership.BORROWED)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThatThrownBy(() -> d.hostSignal(0, 1)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThatThrownBy(() -> d.counterValue(0)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThatThrownBy(() -> d.timelinePoint(1, 1, null)).isInstanceOf(NullPointerException.class);
            assertThat(d.state.isLost()).isFalse();
        }
    }

    @Test
    void wrappingWithItsInstanceUsesTheInstancesDeviceProcAddrAndSharesTheDeviceState() {
        try (VulkanContext own = Lavapipe.context()) {
            // a valid instance handle with a device: the instance's vkGetDeviceProcAddr is used and works
            try (VulkanDevice view = VulkanDevice.wrap(own.instance(), own.device().handle())) {
                assertThat(view.waitSet()).isSameAs(own.device().waitSet());
            }
        }
    }

    @Test
    void failureCodesMapToExceptionsWithTheCodeItsNameAndAKind() {
        SyncException oom = VkResults.failure(Vulkan.VK_ERROR_OUT_OF_HOST_MEMORY(), "vkCreateSemaphore");
        assertThat(oom).isInstanceOf(SyncBackendException.class).hasMessageContaining("VK_ERROR_OUT_OF_HOST_MEMORY = -1");
        assertThat(((SyncBackendException) oom).nativeCode()).isEqualTo(-1);
        assertThat(((SyncBackendException) oom).nativeCodeName()).isEqualTo("VK_ERROR_OUT_OF_HOST_MEMORY");
        assertThat(oom.kind()).isEqualTo(ErrorKind.RECOVERABLE);
        assertThat(oom.backend()).contains(BackendKind.VULKAN);
        assertThat(VkResults.failure(Vulkan.VK_ERROR_OUT_OF_DEVICE_MEMORY(), "x").kind()).isEqualTo(ErrorKind.RECOVERABLE);

        SyncException lost = VkResults.failure(Vulkan.VK_ERROR_DEVICE_LOST(), "vkWaitSemaphores");
        assertThat(lost).isInstanceOf(DeviceLostException.class);
        assertThat(lost.kind()).isEqualTo(ErrorKind.FATAL);

        assertThat(VkResults.failure(Vulkan.VK_ERROR_FEATURE_NOT_PRESENT(), "x").kind()).isEqualTo(ErrorKind.CONFIGURATION);
        assertThat(VkResults.failure(Vulkan.VK_ERROR_UNKNOWN(), "x").kind()).isEqualTo(ErrorKind.FATAL);
        assertThat(VkResults.name(-12345)).isEqualTo("VkResult(-12345)");
        assertThat(VkResults.name(Vulkan.VK_TIMEOUT())).isEqualTo("VK_TIMEOUT");
        assertThat(VkResults.failure(Vulkan.VK_INCOMPLETE(), "x")).isInstanceOf(SyncBackendException.class)
                .hasMessageContaining("VK_INCOMPLETE");
    }
}
