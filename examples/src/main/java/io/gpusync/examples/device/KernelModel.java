package io.gpusync.examples.device;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Kernel durations that look like real ones: log-normal around {@code median} with shape {@code sigma}
 * (σ = 0.5 puts p99 at ≈ 3.2 × the median), plus a rare tail — with probability {@code tailProbability} a
 * kernel takes {@code tailFactor} times longer (a clock drop, a page fault, a noisy neighbour).
 *
 * @param median          the median duration, &gt; 0
 * @param sigma           the standard deviation of the underlying normal, ≥ 0 (0 = every kernel takes the median)
 * @param tailProbability in [0, 1]
 * @param tailFactor      ≥ 1
 */
public record KernelModel(Duration median, double sigma, double tailProbability, double tailFactor) {
    /** Median 200 µs, σ 0.5, 0.2 % of kernels 10 × slower. */
    public static final KernelModel DEFAULT = new KernelModel(Duration.ofNanos(200_000), 0.5, 0.002, 10);

    public KernelModel {
        if (median.isNegative() || median.isZero()) {
            throw new IllegalArgumentException("median must be positive: " + median);
        }
        if (!(sigma >= 0) || !(tailProbability >= 0 && tailProbability <= 1) || !(tailFactor >= 1)) {
            throw new IllegalArgumentException("need sigma ≥ 0, tailProbability in [0,1], tailFactor ≥ 1: "
                    + sigma + ", " + tailProbability + ", " + tailFactor);
        }
    }

    /** Every kernel takes exactly {@code d}. */
    public static KernelModel fixed(Duration d) {
        return new KernelModel(d, 0, 0, 1);
    }

    /** One sampled duration in nanoseconds. */
    public long sampleNanos(RandomGenerator random) {
        double nanos = median.toNanos() * Math.exp(sigma * random.nextGaussian());
        if (tailProbability > 0 && random.nextDouble() < tailProbability) {
            nanos *= tailFactor;
        }
        return Math.max(1, Math.round(nanos));
    }

    @Override
    public String toString() {
        String s = "log-normal kernels, median " + Units.duration(median.toNanos()) + ", sigma " + sigma;
        return tailProbability > 0 ? s + ", " + Units.percent(tailProbability) + " of them ×" + Units.number(tailFactor) : s;
    }
}
