package io.gpusync.examples.device;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One unit of work.
 *
 * @param size     a size hint (elements, iterations) for backends that run a real kernel; ≥ 1
 * @param duration how long the work should take on the device, or empty for the device's own model
 *                 (the simulated device samples its kernel-duration distribution; real backends size the
 *                 kernel from {@code size})
 */
public record Work(int size, Optional<Duration> duration) {
    /** The default unit: size 1, the device's own duration. */
    public static final Work DEFAULT = new Work(1, Optional.empty());

    public Work {
        if (size < 1) {
            throw new IllegalArgumentException("size must be ≥ 1: " + size);
        }
        Objects.requireNonNull(duration, "duration");
        duration.ifPresent(d -> {
            if (d.isNegative()) {
                throw new IllegalArgumentException("duration must not be negative: " + d);
            }
        });
    }
}
