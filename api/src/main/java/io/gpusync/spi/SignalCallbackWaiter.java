package io.gpusync.spi;

import io.gpusync.SyncWaiter;

/**
 * A waiter whose API reports completion through a callback (a {@code CpuTimeline}, OpenCL
 * {@code clSetEventCallback}, CUDA stream callbacks): an engine waits on it with no thread at all.
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

    /**
     * Whether listeners may run on a thread the driver owns (an OpenCL or CUDA callback thread). Engines
     * then hand the completion to a thread of their own before any user code runs. {@code false} only when
     * listeners run on the caller's thread (inside {@code onSignal}) or on the thread of whoever signals
     * (a {@code CpuTimeline}). Defaults to {@code true}, the safe answer.
     */
    default boolean callsBackOnDriverThread() {
        return true;
    }
}
