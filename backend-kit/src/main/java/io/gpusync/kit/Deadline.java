package io.gpusync.kit;

import io.gpusync.spi.Timeouts;

import java.time.Duration;

/**
 * A point in {@link System#nanoTime()} time after which a wait gives up. Never overflows: a timeout too
 * large to represent is a deadline that never passes. Immutable and thread-safe.
 */
public final class Deadline {
    private final long start;
    private final long totalNanos;

    private Deadline(long start, long totalNanos) {
        this.start = start;
        this.totalNanos = totalNanos;
    }

    /** The deadline {@code timeout} from now. */
    public static Deadline after(Duration timeout) {
        return new Deadline(System.nanoTime(), Timeouts.toNanos(timeout));
    }

    /** Whether this deadline never passes. */
    public boolean isForever() {
        return totalNanos == Long.MAX_VALUE;
    }

    /** Nanoseconds left, {@code 0} once passed, {@link Long#MAX_VALUE} if {@link #isForever()}. */
    public long remainingNanos() {
        if (isForever()) {
            return Long.MAX_VALUE;
        }
        long left = totalNanos - (System.nanoTime() - start);
        return Math.max(0, left);
    }

    /** Whether this deadline has passed. */
    public boolean hasPassed() {
        return remainingNanos() == 0;
    }
}
