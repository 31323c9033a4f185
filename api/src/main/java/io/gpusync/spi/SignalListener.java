package io.gpusync.spi;

import io.gpusync.SyncException;

/**
 * Receives the completion of a {@link SignalCallbackWaiter} registration: exactly one of the two methods,
 * at most once.
 *
 * <p><b>Threading.</b> Called on whatever thread observed the completion — a driver-owned thread (OpenCL,
 * CUDA), the thread that signalled a {@code CpuTimeline}, or synchronously inside
 * {@link SignalCallbackWaiter#onSignal} when already complete. Implementations must only hand the result
 * over (set a flag, enqueue, write an eventfd) and must never call back into the driver or run user code.
 */
public interface SignalListener {
    /** The point was signalled. */
    void signalled();

    /** The point can never be signalled: the driver reported {@code error}. */
    void failed(SyncException error);
}
