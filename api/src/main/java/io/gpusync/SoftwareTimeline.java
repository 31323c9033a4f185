package io.gpusync;

/**
 * A timeline semaphore kept in software on the host: a monotonically increasing unsigned 64-bit counter that
 * the waits of {@link SyncPoint.HostTimeline} points resolve against. gpusync's implementation is
 * {@code io.gpusync.cpu.CpuTimeline}; the contract names only this interface, so that it depends on no
 * backend.
 *
 * <p><b>Threading.</b> Implementations are thread-safe; {@link #signal} and {@link #fail} complete due waits
 * on the calling thread and never block on anything but a short internal lock; {@link #value()} and
 * {@link #at} never block.
 */
public interface SoftwareTimeline {

    /** The current value (unsigned). Never blocks. */
    long value();

    /**
     * Raises the timeline to {@code newValue} (unsigned) and completes every wait at or below it. A value at
     * or below the current one is a no-op: the value is the highest ever signalled.
     */
    void signal(long newValue);

    /** Fails every pending and later wait with {@code cause}, as a lost device would; irreversible. */
    void fail(Throwable cause);

    /** A point at {@code value} (unsigned) on this timeline, with a fresh waiter. */
    SyncPoint at(long value);
}
