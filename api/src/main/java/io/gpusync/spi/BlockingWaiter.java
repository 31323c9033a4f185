package io.gpusync.spi;

import io.gpusync.SyncWaiter;

import java.util.concurrent.Executor;

/**
 * Marks a waiter whose {@link SyncWaiter#await} parks the calling thread in the OS or the driver (no
 * spinning, no probe loop) and honours its timeout to the API's granularity, so an engine may dedicate a
 * platform thread to it and wait in short slices, checking for cancellation between slices.
 *
 * <p>A waiter without this mark is treated as probe-only: its {@code await} may burn a core.
 */
public interface BlockingWaiter extends SyncWaiter {

    /**
     * The threads on which an engine runs this waiter's blocking waits (every slice and the first probe), or
     * {@code null} (the default) for the engine's own pool threads. A backend lends threads of its own when its
     * driver ties state to each calling thread that must not be torn down when an engine's thread ends (NVIDIA's
     * EGL: {@code io.gpusync.gl}); the engine then completes such a wait on the lent thread, with no hand-off.
     *
     * <p>The executor runs each task on one of the backend's threads, never on the calling thread, and never
     * blocks the caller (a subscribing event loop calls it). It may refuse a task with a
     * {@link java.util.concurrent.RejectedExecutionException}: the engine then serves the wait as it does one
     * for which its pool is full. An engine counts a lent task among its threads until the task returns, and
     * bounds lent tasks as it bounds its pool threads.
     */
    default Executor waitThreads() {
        return null;
    }
}
