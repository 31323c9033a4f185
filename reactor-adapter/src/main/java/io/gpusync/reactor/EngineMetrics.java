package io.gpusync.reactor;

/** What the engine reports about its waits; {@link #NONE} when no meter registry is configured. */
interface EngineMetrics {
    EngineMetrics NONE = new EngineMetrics() { };

    default void completed(WaitPath path, long waitNanos) {
    }

    default void failed(WaitPath path, Throwable error) {
    }

    default void timedOut(WaitPath path) {
    }

    default void cancelled(WaitPath path) {
    }

    /** Signal observed by the engine → subscriber's {@code onComplete} (handoffs and deliverOn hops). */
    default void delivered(WaitPath path, long latencyNanos) {
    }
}
