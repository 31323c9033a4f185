package io.gpusync;

import java.time.Duration;
import java.util.Objects;

/**
 * {@link SyncWaiter#SIGNALLED}: the waiter of work that is already complete. It is a plain contract waiter
 * (it advertises no SPI ability): every wait and probe answers at once, so an engine's first probe completes
 * it on the subscribing thread.
 */
final class AlwaysSignalled implements SyncWaiter {

    @Override
    public void await(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout);
        }
    }

    @Override
    public boolean isSignaled() {
        return true;
    }

    @Override
    public BackendKind backend() {
        return BackendKind.CPU;
    }

    @Override
    public String toString() {
        return "AlwaysSignalled[SyncWaiter.SIGNALLED]";
    }
}
