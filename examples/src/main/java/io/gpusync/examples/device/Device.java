package io.gpusync.examples.device;

import io.gpusync.SyncPoint;

import java.util.OptionalLong;

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

    /**
     * When the oldest work submitted to one of this device's queues and not finished yet was submitted
     * ({@link System#nanoTime()}), or empty when no work is queued: how long a queue has been held up (the demo's
     * {@code /health} is DOWN while that is longer than {@code --stuck-after}). Whether the requests that
     * submitted the work still wait for it (or timed out) does not matter. Probes, never waits.
     */
    OptionalLong oldestUnfinishedSubmission();

    /** Stops the device; waits on its pending points fail (as a lost device's would). Idempotent. */
    @Override
    void close();
}
