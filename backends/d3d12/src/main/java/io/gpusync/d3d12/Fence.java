package io.gpusync.d3d12;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.MemorySegment;

/**
 * One {@code ID3D12Fence*} as the backend sees it: the seam that calls it, the anchor that releases it (after
 * {@code adopt}) or never does (after {@code borrow}), and the probe shared by every waiter on it. Immutable, thread-safe.
 */
final class Fence {
    /** D3D12's completed value once the device is removed ({@code UINT64_MAX}). */
    static final long DEVICE_REMOVED_VALUE = -1L;

    final D3d12Native d3d12;
    final MemorySegment fence;
    final NativeAnchor anchor;

    private Fence(D3d12Native d3d12, MemorySegment fence, NativeAnchor anchor) {
        this.d3d12 = d3d12;
        this.fence = fence;
        this.anchor = anchor;
    }

    /** A fence whose one reference gpusync releases once no waiter needs it. */
    static Fence adopt(D3d12Native d3d12, MemorySegment fence) {
        long address = fence.address();
        return new Fence(d3d12, fence, NativeAnchor.adopt("ID3D12Fence " + hex(address),
                () -> d3d12.release(MemorySegment.ofAddress(address))));
    }

    /** A fence the caller releases; gpusync never does. */
    static Fence borrow(D3d12Native d3d12, MemorySegment fence) {
        return new Fence(d3d12, fence, NativeAnchor.borrow(Fence.class, "ID3D12Fence " + hex(fence.address())));
    }

    /**
     * {@code GetCompletedValue}, with {@code UINT64_MAX} (device removed) turned into {@link DeviceLostException}.
     */
    long completedValue(String waitingFor) {
        long v = d3d12.completedValue(fence);
        if (v == DEVICE_REMOVED_VALUE) {
            int reason = d3d12.deviceRemovedReason(fence);
            throw new DeviceLostException(BackendKind.D3D12, "ID3D12Fence " + hex(fence.address())
                    + " reports UINT64_MAX, D3D12's device-removed value, while waiting for " + waitingFor
                    + " (GetDeviceRemovedReason: " + Hresults.name(reason) + ")");
        }
        return v;
    }

    static String hex(long address) {
        return "0x" + Long.toHexString(address);
    }

    @Override
    public String toString() {
        return "ID3D12Fence " + hex(fence.address()) + (anchor.isAdopted() ? " (released by gpusync)" : " (released by the caller)");
    }
}
