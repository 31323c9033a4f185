package io.gpusync.examples;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README's "Vulkan from your own device" runs on the driver the build pins (lavapipe): the application's own
 * device, created with the timelineSemaphore feature, serves a gpusync wait, and {@code whenReleased()} completes
 * once the application has closed gpusync's handles — not before — so it can destroy the device.
 */
class OwnVulkanDeviceTest {

    @Test
    void aWaitOnTheApplicationsOwnDeviceCompletesAndWhenReleasedTellsWhenTheDeviceMayBeDestroyed() throws Exception {
        OwnVulkanDevice.Report report = OwnVulkanDevice.run();

        assertThat(report.counterAfterSignal()).isEqualTo(1);
        assertThat(report.releasedBeforeClose()).as("released while a view and a waiter were open").isFalse();
        assertThat(report.released()).isTrue();
    }
}
