package io.gpusync.d3d12;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Mints {@link SyncPoint.D3D12} points from raw {@code ID3D12Fence*} handles: the fence reaching {@code value}
 * (unsigned). Each point's waiter probes with {@code GetCompletedValue} (a cheap probe), waits through an eventfd
 * registered with {@code SetEventOnCompletion} (so {@code GpuSync} watches it with epoll and no thread waits, and a
 * blocking {@code await} parks in {@code poll(2)}), and rebinds to other values of the same fence
 * ({@link SyncPoint#withValue}). A fence at {@code UINT64_MAX} — D3D12's device-removed value — fails every wait
 * and probe with {@link io.gpusync.DeviceLostException}.
 *
 * <p><b>Lifetime.</b> {@link #adopt} takes over one reference of the fence: gpusync calls {@code Release} exactly
 * once, when the point's waiter and every waiter rebound from it are closed (or unreachable) and no wait is in
 * progress. {@link #borrow} never releases: the caller keeps the fence alive while the points are in use.
 *
 * <p><b>Platforms.</b> Linux x86-64 through vkd3d (Debian {@code libvkd3d1 libvkd3d-utils1}) and gpusync's shim
 * {@code libgpusync_d3d12.so}, which {@code gpusync-bindings-d3d12} carries when it was built with a C compiler
 * and {@code libvkd3d-dev}. The fence must come from a device created through that shim
 * ({@code gs_d3d12_create_device}; the test kit's {@code io.gpusync.test.d3d12.D3D12Device} is one): a vkd3d
 * device made elsewhere signals events through its own instance's
 * callback, which cannot write gpusync's eventfds, so its fences are refused with
 * {@link SyncInvalidArgumentException}. Off Linux x86-64, or without the shim, every method throws
 * {@link io.gpusync.SyncNotSupportedException} saying why.
 *
 * <p>Thread-safe; nothing here blocks.
 */
public final class D3D12Fences {
    private D3D12Fences() {
    }

    /**
     * A point on a fence the caller keeps (and releases) itself.
     *
     * @param fence an {@code ID3D12Fence*}
     * @param value the value to wait for (unsigned); not {@code UINT64_MAX}
     * @throws io.gpusync.SyncNotSupportedException where D3D12 is not available (the message says why)
     * @throws SyncInvalidArgumentException         for a NULL fence, a fence of a device gpusync did not create, or
     *                                              {@code UINT64_MAX}
     */
    public static SyncPoint.D3D12 borrow(MemorySegment fence, long value) {
        D3d12Native d3d12 = D3d12Native.platform();
        MemorySegment f = requireFence(d3d12, fence);
        requireValue(f, value);
        return point(Fence.borrow(d3d12, f), value);
    }

    /**
     * A point that takes over one reference of {@code fence}: gpusync releases it once no waiter needs it.
     * If this method throws, the reference stays the caller's.
     *
     * @param fence an {@code ID3D12Fence*} whose reference the caller hands over
     * @param value the value to wait for (unsigned); not {@code UINT64_MAX}
     * @throws io.gpusync.SyncNotSupportedException where D3D12 is not available (the message says why)
     * @throws SyncInvalidArgumentException         for a NULL fence, a fence of a device gpusync did not create, or
     *                                              {@code UINT64_MAX}
     */
    public static SyncPoint.D3D12 adopt(MemorySegment fence, long value) {
        D3d12Native d3d12 = D3d12Native.platform();
        MemorySegment f = requireFence(d3d12, fence);
        requireValue(f, value);
        return point(Fence.adopt(d3d12, f), value);
    }

    static SyncPoint.D3D12 point(Fence fence, long value) {
        return new SyncPoint.D3D12(fence.fence, value, new D3D12FenceWaiter(fence, value));
    }

    private static MemorySegment requireFence(D3d12Native d3d12, MemorySegment fence) {
        Objects.requireNonNull(fence, "fence");
        if (fence.address() == 0) {
            throw new SyncInvalidArgumentException(BackendKind.D3D12, "the fence is NULL");
        }
        MemorySegment f = MemorySegment.ofAddress(fence.address());
        int ours = d3d12.fenceIsOurs(f);
        if (Hresults.failed(ours)) {
            throw Hresults.failure(ours, "ID3D12Fence::GetDevice");
        }
        if (ours == 0) {
            throw new SyncInvalidArgumentException(BackendKind.D3D12, "ID3D12Fence " + Fence.hex(f.address())
                    + " belongs to a device gpusync did not create (vkd3d-utils' D3D12CreateDevice, or a vkd3d instance"
                    + " of your own): its events go to that instance's callback, which cannot wake gpusync's waits."
                    + " Create the device through gpusync's shim (the test kit's D3D12Device.open() does)");
        }
        return f;
    }

    private static void requireValue(MemorySegment fence, long value) {
        if (value == Fence.DEVICE_REMOVED_VALUE) {
            throw new SyncInvalidArgumentException(BackendKind.D3D12, "UINT64_MAX is D3D12's device-removed value: "
                    + "ID3D12Fence " + Fence.hex(fence.address()) + " cannot be awaited at it");
        }
    }
}
