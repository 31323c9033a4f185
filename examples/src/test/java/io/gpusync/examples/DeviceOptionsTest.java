package io.gpusync.examples;

import io.gpusync.examples.device.DeviceOptions;
import io.gpusync.examples.device.KernelModel;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How many CUDA streams the demo's CUDA device spreads requests over. */
class DeviceOptionsTest {
    @Test
    void cudaStreamsAreWhatWasAskedForElseOnePerHardwareWorkQueue() {
        assertThat(new DeviceOptions(KernelModel.DEFAULT, 4, false, 12).cudaStreams()).isEqualTo(12);
        String env = System.getenv("CUDA_DEVICE_MAX_CONNECTIONS");
        int expected = env == null ? 8 : Math.max(1, Math.min(32, Integer.parseInt(env.trim())));
        assertThat(DeviceOptions.DEFAULT.cudaStreams()).isEqualTo(expected);
    }

    @Test
    void cudaPointsAreEventsUnlessTimelineValuesAreAskedFor() {
        assertThat(DeviceOptions.DEFAULT.cudaPoint()).isEqualTo(DeviceOptions.CudaPoint.EVENT);
        DeviceOptions timeline = new DeviceOptions(KernelModel.DEFAULT, 4, false, 0, DeviceOptions.CudaPoint.TIMELINE);
        assertThat(timeline.withAllowSoftware(true).cudaPoint()).isEqualTo(DeviceOptions.CudaPoint.TIMELINE);
        assertThat(DeviceOptions.CudaPoint.named("timeline")).isEqualTo(DeviceOptions.CudaPoint.TIMELINE);
        assertThat(DeviceOptions.CudaPoint.named("EVENT")).isEqualTo(DeviceOptions.CudaPoint.EVENT);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> DeviceOptions.CudaPoint.named("fence"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("event or timeline");
    }
}
