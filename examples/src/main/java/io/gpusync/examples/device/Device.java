package io.gpusync.examples.device;

import io.gpusync.SyncPoint;

import java.time.Duration;
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

    /**
     * Submits one {@link MatrixChain} computation of the input expanded from {@code seed}; returns at once. A device
     * that runs it for real (CUDA: copy in, kernel, copy out) overrides this; the default is a stand-in that submits one
     * ordinary unit of work ({@link Work#DEFAULT}) and computes the checksum on the host once that is done, so that the
     * showcase's plumbing runs on every backend ({@link #computesOnDevice()} says which it is).
     *
     * @param forBlockingWait the caller will block a thread in {@link #awaitBlocking} on the point (CUDA then hands out a
     *                        recorded event whatever the configured point kind is, the thing such code waits on)
     * @throws io.gpusync.SyncException if the device cannot take work (closed, lost, out of buffers)
     */
    default Computation compute(long seed, boolean forBlockingWait) {
        SyncPoint point = submit(Work.DEFAULT);
        int rounds = 1;
        return new Computation() {
            @Override
            public long seed() {
                return seed;
            }

            @Override
            public int rounds() {
                return rounds;
            }

            @Override
            public SyncPoint point() {
                return point;
            }

            @Override
            public int checksum() {
                return MatrixChain.checksum(seed, rounds);
            }

            @Override
            public void release(boolean waitFinished) {
            }
        };
    }

    /** Whether {@link #compute} runs on the device (true) or is the host stand-in (false, the default). */
    default boolean computesOnDevice() {
        return false;
    }

    /**
     * What {@link #compute} does on this device, in words; a device that runs it for real prepares it here (CUDA: loads
     * the kernel, allocates the buffers and times the work), so that the first request does not pay for it.
     */
    default String computeDescription() {
        return "host stand-in: one ordinary unit of work per request, the checksum computed on the host";
    }

    /**
     * Blocks the calling thread until {@code point} is signalled, the way code without gpusync blocks on this API: the
     * default is the point's own blocking wait, bounded by {@code timeout}; CUDA calls {@code cuEventSynchronize},
     * which has no timeout (the caller bounds the request instead; the thread stays blocked until the GPU is done).
     *
     * @throws io.gpusync.SyncException if the wait fails or times out
     */
    default void awaitBlocking(SyncPoint point, Duration timeout) {
        point.waiter().await(timeout);
    }

    /** Stops the device; waits on its pending points fail (as a lost device's would). Idempotent. */
    @Override
    void close();
}
