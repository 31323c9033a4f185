package io.gpusync;

import java.lang.foreign.MemorySegment;

/**
 * The CUDA-event extension of {@link SyncWaiter} (gpu-handle-types' {@code CudaEventWaiter}), the waiter of a
 * {@link SyncPoint.CudaEvent}. Reached through {@link SyncWaiter#asCudaEventWaiter()} by cross-API bridges
 * that must gate their own CUDA stream on a producer's event without knowing the concrete waiter.
 *
 * <p><b>Drop discipline.</b> Implementations push the event's owning {@code CUcontext} before
 * {@code cuEventDestroy_v2} and pop it <em>if and only if</em> the push succeeded — a pop without a push
 * would consume whatever the releasing thread had current.
 *
 * <p><b>Threading.</b> Thread-safe; {@link #waitOnForeignStream} may be called from any thread, with or
 * without a current context.
 */
public interface CudaEventWaiter extends SyncWaiter {

    /**
     * Issues {@code cuStreamWaitEvent(foreignStream, event, 0)}: all work submitted to
     * {@code foreignStream} after this call waits on the GPU for this event, with no CPU round trip. The
     * stream may belong to a different {@code CUcontext} than the event ({@code cuStreamWaitEvent} is
     * cross-context). {@link MemorySegment#NULL} means the calling thread's default stream (of its current
     * context). Never blocks the calling thread.
     *
     * @throws SyncNotSupportedException if the CUDA driver is missing or the call returns an error
     */
    void waitOnForeignStream(MemorySegment foreignStream);

    @Override
    default BackendKind backend() {
        return BackendKind.CUDA;
    }

    @Override
    default java.util.Optional<CudaEventWaiter> asCudaEventWaiter() {
        return java.util.Optional.of(this);
    }
}
