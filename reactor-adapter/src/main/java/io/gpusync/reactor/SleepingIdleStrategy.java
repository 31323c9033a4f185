package io.gpusync.reactor;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/** Parks a fixed time between passes: predictable, cheap on CPU, wake latency ≈ the park time plus timer slack. */
public final class SleepingIdleStrategy implements IdleStrategy {
    private final long parkNanos;

    public SleepingIdleStrategy(Duration park) {
        if (park.isNegative() || park.isZero()) {
            throw new IllegalArgumentException("park must be positive: " + park);
        }
        this.parkNanos = park.toNanos();
    }

    @Override
    public void idle(int completions, long passNanos) {
        LockSupport.parkNanos(this, parkNanos);
    }

    @Override
    public void reset() {
    }
}
