package io.gpusync.gl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.VulkanSemaphoreKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.test.vulkan.ExportingVulkanDevice;

import java.time.Duration;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import io.gpusync.test.gl.EglProducer;

/**
 * OpenGL semaphores on a driver that imports Vulkan's opaque fds (NVIDIA's EGL on the H200): a Vulkan semaphore is
 * exported, imported into GL through {@link GlSemaphores#importFd}, and the CPU awaits the GL point — never before
 * Vulkan signals, promptly after. Skips, saying why, where the GL lacks the extensions (Mesa here; its refusal is
 * {@link GlSemaphoresTest}'s).
 */
@Tag("gpu")
class GlSemaphoresGpuTest {

    @Test
    void aTimelinePointIsSignalledOnlyOnceVulkanReachesItsValueAndRebindsToTheNext() {
        try (EglProducer producer = GlTestSupport.producer(); ExportingVulkanDevice vk = exportingDevice(null)) {
            GlShareGroup group = producer.shareGroup();
            assumeExtensions(group, true);
            long semaphore = vk.createSemaphore(true, 0);
            try {
                SyncPoint.OpenGL atOne = GlSemaphores.importFd(group, vk.exportOpaqueFd(semaphore),
                        VulkanSemaphoreKind.TIMELINE, 1);
                assertThat(atOne.isSignaled()).as("Vulkan is at 0").isFalse();
                assertThatThrownBy(() -> atOne.await(Duration.ofMillis(50))).isInstanceOf(SyncTimeoutException.class);

                vk.hostSignal(semaphore, 1);
                atOne.await(Duration.ofSeconds(10));
                assertThat(atOne.isSignaled()).isTrue();

                SyncPoint atThree = atOne.withValue(3); // a new GL wait at 3: nothing of 1 carried over
                assertThat(atThree.isSignaled()).as("Vulkan is at 1").isFalse();
                vk.hostSignal(semaphore, 2);
                assertThatThrownBy(() -> atThree.await(Duration.ofMillis(50))).as("2 is not 3")
                        .isInstanceOf(SyncTimeoutException.class);
                vk.hostSignal(semaphore, 3);
                atThree.await(Duration.ofSeconds(10));
                atThree.waiter().close();
                atOne.waiter().close();
            } finally {
                vk.waitFor(semaphore, 3, 1_000_000_000L);
                vk.destroySemaphore(semaphore);
            }
        }
    }

    @Test
    void aBinaryPointIsSignalledByAVulkanQueueSubmit() {
        try (EglProducer producer = GlTestSupport.producer(); ExportingVulkanDevice vk = exportingDevice(null)) {
            GlShareGroup group = producer.shareGroup();
            assumeExtensions(group, false);
            long semaphore = vk.createSemaphore(false, 0);
            try {
                SyncPoint.OpenGL point = GlSemaphores.importFd(group, vk.exportOpaqueFd(semaphore),
                        VulkanSemaphoreKind.BINARY, 0);
                assertThatThrownBy(() -> point.await(Duration.ofMillis(50))).as("nothing signalled it yet")
                        .isInstanceOf(SyncTimeoutException.class);
                vk.signalOnQueue(semaphore);
                point.await(Duration.ofSeconds(10));
                assertThat(point.isSignaled()).isTrue();
                point.waiter().close();
            } finally {
                vk.destroySemaphore(semaphore);
            }
        }
    }

    private static void assumeExtensions(GlShareGroup group, boolean timeline) {
        try (ShareContexts.Binding ignored = group.contexts().bind()) {
            var missing = GlSemaphores.missingExtensions(timeline);
            assumeTrue(missing.isEmpty(), "this GL lacks " + missing);
        }
    }

    /** A Vulkan device that exports semaphores, or the test skips saying why there is none. */
    private static ExportingVulkanDevice exportingDevice(byte[] uuid) {
        try {
            return ExportingVulkanDevice.open(uuid);
        } catch (SyncNotSupportedException e) {
            org.junit.jupiter.api.Assumptions.abort(e.getMessage());
            throw e;
        }
    }
}
