package io.gpusync.reactor;

/**
 * Never parks: {@link Thread#onSpinWait()} between passes. The lowest wake latency for probe-only waits, at
 * the price of one core per poller thread while any probe-only wait is pending. For latency-tuned engines.
 */
public final class BusySpinIdleStrategy implements IdleStrategy {
    @Override
    public void idle(int completions, long passNanos) {
        Thread.onSpinWait();
    }

    @Override
    public void reset() {
    }
}
