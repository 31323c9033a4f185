package io.gpusync;

import java.time.Duration;
import java.util.Objects;

/** {@link SyncWaiter#SIGNALLED}: the waiter of work that is already complete. */
final class AlwaysSignalled implements SyncWaiter, io.gpusync.spi.SignalCallbackWaiter {

    @Override
    public void await(Duration timeout) {
        io.gpusync.spi.Timeouts.requireValid(timeout);
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
    public io.gpusync.spi.CallbackRegistration onSignal(io.gpusync.spi.SignalListener listener) {
        Objects.requireNonNull(listener, "listener").signalled();
        return io.gpusync.spi.CallbackRegistration.DONE;
    }

    @Override
    public boolean callsBackOnDriverThread() {
        return false; // listeners run inside onSignal or on the signalling thread
    }

    @Override
    public String toString() {
        return "SyncWaiter.SIGNALLED";
    }
}
