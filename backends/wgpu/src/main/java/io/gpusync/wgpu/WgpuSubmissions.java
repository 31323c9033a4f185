package io.gpusync.wgpu;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * {@link SyncPoint.Wgpu} points over a {@code WGPUDevice} and a submission index (from
 * {@code wgpuQueueSubmitForIndex}); their waiter is a {@code WgpuSubmissionWaiter} over wgpu-native's
 * {@code wgpuDevicePoll}. The library is loaded on first use (see {@code WgpuNative}): absent, every factory
 * throws {@link io.gpusync.SyncNotSupportedException} naming it. {@code null} → NPE; a NULL or heap device →
 * {@link SyncInvalidArgumentException}. The device is borrowed. Thread-safe.
 */
public final class WgpuSubmissions {
    private static final BooleanSupplier NEVER_LOST = () -> false;

    private WgpuSubmissions() {
    }

    /** A point for {@code submissionIndex} on {@code device}. */
    public static SyncPoint.Wgpu point(MemorySegment device, long submissionIndex) {
        return point(device, submissionIndex, NEVER_LOST);
    }

    /**
     * A point for {@code submissionIndex} on {@code device}; {@code deviceLost} says whether the application's
     * device-lost callback has fired (probes and waits then fail with {@link io.gpusync.DeviceLostException}).
     */
    public static SyncPoint.Wgpu point(MemorySegment device, long submissionIndex, BooleanSupplier deviceLost) {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(deviceLost, "deviceLost");
        if (!device.isNative() || device.address() == 0) {
            throw new SyncInvalidArgumentException(BackendKind.WGPU,
                    "device must be a non-NULL native WGPUDevice, got " + device);
        }
        WgpuNative.devicePoll(); // refuses now if wgpu-native is absent
        MemorySegment d = MemorySegment.ofAddress(device.address());
        return new SyncPoint.Wgpu(submissionIndex, new WgpuSubmissionWaiter(d, submissionIndex, deviceLost));
    }
}
