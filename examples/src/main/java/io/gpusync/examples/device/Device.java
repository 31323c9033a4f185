package io.gpusync.examples.device;

import io.gpusync.SyncPoint;

/**
 * One GPU (or simulated) queue the demo submits work to.
 *
 * <p>{@link #submit} enqueues one unit of work and returns, without waiting, the {@link SyncPoint} that the
 * device signals when that work is done; the caller awaits it through {@code GpuSync}. Thread-safe.
 */
public interface Device extends AutoCloseable {

    /** The backend id: {@code cpu}, {@code opencl}, {@code vulkan} or {@code cuda}. */
    String backend();

    /** A one-line description for logs and {@code /health} (device name, model, queues). */
    String description();

    /**
     * Enqueues {@code work}; returns at once with the point signalled when it completes.
     *
     * @throws io.gpusync.SyncException if the device cannot take work (closed, lost)
     */
    SyncPoint submit(Work work);

    /** Stops the device; waits on its pending points fail (as a lost device's would). Idempotent. */
    @Override
    void close();
}
