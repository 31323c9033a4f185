package io.gpusync.d3d12;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.bindings.d3d12.D3d12Shim;
import io.gpusync.internal.NativeAccess;

import java.lang.foreign.MemorySegment;

/**
 * {@link D3d12Native} on Linux x86-64 through vkd3d and gpusync's System V shim ({@link D3d12Shim}): see the
 * seam's Javadoc for why. Stateless, thread-safe.
 */
final class VkD3dShimNative implements D3d12Native {
    private static final VkD3dShimNative INSTANCE = new VkD3dShimNative();

    private VkD3dShimNative() {
    }

    static VkD3dShimNative load() {
        String os = System.getProperty("os.name", "");
        String arch = System.getProperty("os.arch", "");
        if (!os.startsWith("Linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            throw D3d12Native.unsupported("gpusync calls D3D12 through vkd3d and its shim on Linux x86-64 only (this is "
                    + os + " " + arch + "; a Windows implementation of the seam, calling the vtables directly, does "
                    + "not exist yet)");
        }
        NativeAccess.require(BackendKind.D3D12, "the D3D12 shim");
        String reason;
        try {
            reason = D3d12Shim.unavailableReason();
        } catch (IllegalCallerException denied) {
            throw NativeAccess.denied(BackendKind.D3D12, "the D3D12 shim", denied);
        }
        if (reason != null) {
            throw D3d12Native.unsupported(reason);
        }
        return INSTANCE;
    }

    @Override
    public long completedValue(MemorySegment fence) {
        return D3d12Shim.fenceCompletedValue(fence);
    }

    @Override
    public int signal(MemorySegment fence, long value) {
        return D3d12Shim.fenceSignal(fence, value);
    }

    @Override
    public int setEventOnCompletion(MemorySegment fence, long value, MemorySegment event) {
        if (event == null || event.equals(MemorySegment.NULL)) {
            throw new SyncInvalidArgumentException(BackendKind.D3D12, "SetEventOnCompletion("
                    + Long.toUnsignedString(value) + ", NULL) would block in the call (and crashes vkd3d 1.2): "
                    + "gpusync always passes an event");
        }
        return D3d12Shim.fenceSetEventOnCompletion(fence, value, event);
    }

    @Override
    public int deviceRemovedReason(MemorySegment fence) {
        return D3d12Shim.fenceDeviceRemovedReason(fence);
    }

    @Override
    public int fenceIsOurs(MemorySegment fence) {
        return D3d12Shim.fenceIsOurs(fence);
    }

    @Override
    public int addRef(MemorySegment unknown) {
        return D3d12Shim.addRef(unknown);
    }

    @Override
    public int release(MemorySegment unknown) {
        return D3d12Shim.release(unknown);
    }

    @Override
    public MemorySegment eventFromEventFd(int eventFd) {
        return D3d12Shim.eventFromEventFd(eventFd);
    }

    @Override
    public void forgetEvent(MemorySegment event) {
        D3d12Shim.eventForget(event);
    }

    @Override
    public String toString() {
        return "VkD3dShimNative[vkd3d through libgpusync_d3d12.so]";
    }
}
