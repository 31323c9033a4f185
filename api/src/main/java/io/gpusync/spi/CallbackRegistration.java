package io.gpusync.spi;

/**
 * A pending {@link SignalCallbackWaiter#onSignal} registration.
 *
 * <p>{@link #cancel()} deregisters the listener and drops the registration's hold on the primitive; it is
 * idempotent, non-blocking and thread-safe. A listener already running concurrently may still complete,
 * so callers keep their own once-only state (the engine does).
 */
@FunctionalInterface
public interface CallbackRegistration {
    /** The registration of a listener that was called synchronously: nothing left to cancel. */
    CallbackRegistration DONE = () -> { };

    /** Deregisters the listener (best effort against a concurrent completion). */
    void cancel();
}
