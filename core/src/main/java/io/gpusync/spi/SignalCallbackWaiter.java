package io.gpusync.spi;

import io.gpusync.SyncWaiter;

/**
 * A waiter whose API reports completion through a callback (a {@code CpuTimeline}, OpenCL
 * {@code clSetEventCallback}, CUDA host functions): an engine waits on it with no thread at all.
 */
public interface SignalCallbackWaiter extends SyncWaiter {

    /**
     * Calls {@code listener} once when the point is signalled (or fails). If it already is, the listener
     * runs synchronously before this method returns and {@link CallbackRegistration#DONE} may be
     * returned. The primitive stays alive until the listener has run or the registration is cancelled.
     *
     * @throws io.gpusync.SyncException if the registration itself fails (the listener is then not called)
     * @throws IllegalStateException    if this waiter is closed
     */
    CallbackRegistration onSignal(SignalListener listener);
}
