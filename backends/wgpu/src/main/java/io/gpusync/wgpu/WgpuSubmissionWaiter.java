package io.gpusync.wgpu;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncWaiter;
import io.gpusync.kit.ProbeLoop;
import io.gpusync.spi.Timeouts;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * The waiter of a wgpu submission index ({@link io.gpusync.SyncPoint.Wgpu}) over wgpu-native's
 * {@code wgpuDevicePoll}. Made by {@link WgpuSubmissions}.
 *
 * <ul>
 *   <li>{@link #isSignaled()}: {@code wgpuDevicePoll(device, false, NULL)} — {@code true} once every queue of
 *       the device is empty (so this submission is done). wgpu's C API has no per-index probe: while later
 *       submissions are still running the probe answers {@code false} although this one may be done.</li>
 *   <li>{@link #await}: {@link io.gpusync.SyncPoint#FOREVER} is one
 *       {@code wgpuDevicePoll(device, true, &index)} (blocks until this index has completed: the API has no
 *       timeout); any finite timeout probes through {@link ProbeLoop} (spin, yield, sleeps up to 1 ms) so it
 *       ends on time and on interrupt.</li>
 *   <li>Errors are never {@code false}: a device the application reports lost (the {@code deviceLost}
 *       supplier, fed from its {@code WGPUDeviceLostCallback}) fails every probe and wait with
 *       {@link DeviceLostException}. wgpu-native handles a poll error ({@code WrongSubmissionIndex}) inside the
 *       library, not through the return value, so it cannot surface here as an exception.</li>
 * </ul>
 *
 * <p><b>Threading and blocking.</b> Thread-safe (wgpu devices are). Probes are cheap driver calls; a
 * {@code FOREVER} wait blocks in the driver and cannot be interrupted. <b>Lifetime:</b> the device is borrowed;
 * the caller keeps it alive while the point is used. {@link #rebindToValue} gives a waiter for another index
 * on the same device, carrying nothing of this index over.
 */
final class WgpuSubmissionWaiter implements SyncWaiter {
    private final MemorySegment device;
    private final long index;
    private final BooleanSupplier deviceLost;

    WgpuSubmissionWaiter(MemorySegment device, long index, BooleanSupplier deviceLost) {
        this.device = device;
        this.index = index;
        this.deviceLost = deviceLost;
    }

    /** The {@code WGPUDevice}. */
    public MemorySegment device() {
        return device;
    }

    /** The submission index (unsigned). */
    public long submissionIndex() {
        return index;
    }

    @Override
    public BackendKind backend() {
        return BackendKind.WGPU;
    }

    @Override
    public boolean isSignaled() {
        checkNotLost();
        return poll(false, MemorySegment.NULL);
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        if (Timeouts.isForever(timeout)) {
            checkNotLost();
            try (Arena a = Arena.ofConfined()) {
                poll(true, a.allocateFrom(ValueLayout.JAVA_LONG, index));
            }
            checkNotLost();
            return;
        }
        ProbeLoop.await(this, timeout);
    }

    private boolean poll(boolean wait, MemorySegment submissionIndex) {
        MethodHandle poll = WgpuNative.devicePoll();
        try {
            return (int) poll.invokeExact(device, wait ? 1 : 0, submissionIndex) != 0;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private void checkNotLost() {
        if (deviceLost.getAsBoolean()) {
            throw new DeviceLostException(BackendKind.WGPU, "the WGPUDevice 0x" + Long.toHexString(device.address())
                    + " of " + this + " is lost");
        }
    }

    @Override
    public Optional<SyncWaiter> rebindToValue(long newIndex) {
        return Optional.of(new WgpuSubmissionWaiter(device, newIndex, deviceLost));
    }

    @Override
    public String toString() {
        return "WgpuSubmissionWaiter[device 0x" + Long.toHexString(device.address()) + ", submission "
                + Long.toUnsignedString(index) + "]";
    }
}
