package io.gpusync.d3d12;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;

import java.lang.foreign.MemorySegment;

/**
 * The seam between the D3D12 backend and the platform's way of calling D3D12's COM methods. Every method is one
 * D3D12 (or shim) call and returns what it returns — an {@code HRESULT} as an {@code int}, a value, a handle —
 * leaving the mapping to exceptions to {@link Hresults} and the callers.
 *
 * <p><b>Implementations.</b> {@link VkD3dShimNative} (Linux x86-64, vkd3d): vkd3d's COM methods are
 * {@code ms_abi} there, which FFM's Linux linker cannot call, so each call goes through gpusync's System V shim
 * ({@code io.gpusync.bindings.d3d12.D3d12Shim}), and an event {@code HANDLE} is a shim handle that writes an
 * eventfd. On Windows an implementation would call the vtables directly through FFM (the Windows linker speaks the
 * x64 COM convention) and make its event a Win32 event, waited on in {@code WaitForSingleObject} slices; it does not
 * exist yet ({@link #platform()} refuses Windows with {@link SyncNotSupportedException}), and the rest of the
 * backend would need only a different wait slice for it.
 *
 * <p>Implementations are stateless and thread-safe (D3D12 fences and queues are free-threaded).
 */
interface D3d12Native {

    /** {@code ID3D12Fence::GetCompletedValue}; {@code -1L} ({@code UINT64_MAX}) once the device is removed. */
    long completedValue(MemorySegment fence);

    /** {@code ID3D12Fence::Signal} from the CPU. */
    int signal(MemorySegment fence, long value);

    /**
     * {@code ID3D12Fence::SetEventOnCompletion(value, event)}; the event is signalled once the fence reaches
     * {@code value} (at once if it has).
     *
     * @throws io.gpusync.SyncInvalidArgumentException for a NULL event (D3D12's "block in this call", which
     *                                                 crashes vkd3d 1.2): never passed on
     */
    int setEventOnCompletion(MemorySegment fence, long value, MemorySegment event);

    /** {@code ID3D12Device::GetDeviceRemovedReason} of the fence's device ({@code S_OK} while alive). */
    int deviceRemovedReason(MemorySegment fence);

    /**
     * 1 if the fence's device was made through gpusync's shim (its events reach gpusync's eventfds), 0 if it was
     * made elsewhere, or a failed {@code HRESULT}.
     */
    int fenceIsOurs(MemorySegment fence);

    /** {@code IUnknown::AddRef}; the new count. */
    int addRef(MemorySegment unknown);

    /** {@code IUnknown::Release}; the new count. */
    int release(MemorySegment unknown);

    /** An event handle signalled by writing to {@code eventFd}; NULL when none can be made. */
    MemorySegment eventFromEventFd(int eventFd);

    /** Makes later signals of {@code event} no-ops (before its eventfd is closed). */
    void forgetEvent(MemorySegment event);

    /**
     * The implementation for this platform.
     *
     * @throws SyncNotSupportedException off Linux x86-64, or where the shim was not built or cannot load (the
     *                                   message says which and why)
     */
    static D3d12Native platform() {
        return VkD3dShimNative.load();
    }

    /** {@link SyncNotSupportedException} for D3D12 with {@code reason}. */
    static SyncNotSupportedException unsupported(String reason) {
        return new SyncNotSupportedException(BackendKind.D3D12, "D3D12 is not available: " + reason);
    }
}
