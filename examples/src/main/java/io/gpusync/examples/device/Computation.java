package io.gpusync.examples.device;

import io.gpusync.SyncPoint;

/**
 * One request's {@link MatrixChain} computation submitted to a {@link Device}: its input was expanded from
 * {@link #seed()}, and {@link #point()} is signalled once the result is back in host memory.
 *
 * <p>Thread-safe. {@link #checksum()} may be read only after the point is signalled; {@link #release()} must be
 * called exactly once by the request, whatever its outcome (never blocks; buffers still in use by the device are
 * reused only after it is done with them).
 */
public interface Computation {

    /** The seed the input was expanded from. */
    long seed();

    /** The matrix products done ({@code X = A·B^rounds}). */
    int rounds();

    /** Signalled when the result is in host memory. */
    SyncPoint point();

    /** The result's checksum, read from host memory; only after {@link #point()} is signalled. */
    int checksum();

    /**
     * Gives the buffers back. {@code waitFinished}: the caller saw the point signalled and nobody waits on it any more
     * (the point's waiter may then be closed at once); otherwise the buffers are reclaimed once the device is done.
     */
    void release(boolean waitFinished);
}
