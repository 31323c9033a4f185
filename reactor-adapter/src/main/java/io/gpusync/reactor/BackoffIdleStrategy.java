package io.gpusync.reactor;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * The default idle strategy of the spin-then-poll scheduler: after a pass that completed something, spin
 * (busy, {@link Thread#onSpinWait()}) for up to the spin budget — completions tend to come in bursts —;
 * then park, starting at {@code minPark} and doubling up to {@code maxPark}. The park is never shorter than
 * what keeps probing under {@code maxCpuShare} of a core: a pass that took {@code p} ns is followed by at
 * least {@code p × (1 / maxCpuShare − 1)} ns of parking, so the probe interval grows with the number of
 * pending waits and the cost of a probe.
 */
public final class BackoffIdleStrategy implements IdleStrategy {
    private final long spinBudgetNanos;
    private final long minParkNanos;
    private final long maxParkNanos;
    private final double parkPerPassNano;

    private long spinStart = -1;
    private long park;

    /**
     * @param spinBudget  how long to spin after activity before parking (0 = never spin)
     * @param minPark     the first park
     * @param maxPark     the longest park (bounds the wake latency of an idle wait)
     * @param maxCpuShare the share of a core probing may use while parked, in (0, 1]
     */
    public BackoffIdleStrategy(Duration spinBudget, Duration minPark, Duration maxPark, double maxCpuShare) {
        if (spinBudget.isNegative() || minPark.isNegative() || minPark.isZero() || maxPark.compareTo(minPark) < 0) {
            throw new IllegalArgumentException("need spinBudget ≥ 0 and 0 < minPark ≤ maxPark");
        }
        if (!(maxCpuShare > 0 && maxCpuShare <= 1)) {
            throw new IllegalArgumentException("maxCpuShare must be in (0, 1]: " + maxCpuShare);
        }
        this.spinBudgetNanos = spinBudget.toNanos();
        this.minParkNanos = minPark.toNanos();
        this.maxParkNanos = maxPark.toNanos();
        this.parkPerPassNano = 1.0 / maxCpuShare - 1.0;
        this.park = minParkNanos;
    }

    /** Spin 50 µs after activity, park 20 µs … 1 ms, probing ≤ 25 % of a core. */
    public static BackoffIdleStrategy defaults() {
        return new BackoffIdleStrategy(Duration.ofNanos(50_000), Duration.ofNanos(20_000),
                Duration.ofMillis(1), 0.25);
    }

    @Override
    public void idle(int completions, long passNanos) {
        long now = System.nanoTime();
        if (completions > 0) {
            spinStart = now;
            park = minParkNanos;
        }
        long floor = (long) (passNanos * parkPerPassNano);
        if (spinStart >= 0 && now - spinStart < spinBudgetNanos) {
            Thread.onSpinWait();
            return;
        }
        spinStart = -1;
        long nanos = Math.max(park, floor);
        LockSupport.parkNanos(this, nanos);
        park = Math.min(park * 2, maxParkNanos);
    }

    @Override
    public void reset() {
        spinStart = System.nanoTime();
        park = minParkNanos;
    }
}
