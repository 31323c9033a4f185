package io.gpusync.reactor;

/** What the engine reports about its waits; {@link #NONE} when no meter registry is bound. */
interface EngineMetrics {
    EngineMetrics NONE = new EngineMetrics() { };

    /** Reports to {@code first}, then to {@code second} (whatever {@code first} throws). */
    static EngineMetrics both(EngineMetrics first, EngineMetrics second) {
        return new EngineMetrics() {
            @Override
            public void completed(WaitPath path, long waitNanos) {
                try {
                    first.completed(path, waitNanos);
                } finally {
                    second.completed(path, waitNanos);
                }
            }

            @Override
            public void failed(WaitPath path, Throwable error) {
                try {
                    first.failed(path, error);
                } finally {
                    second.failed(path, error);
                }
            }

            @Override
            public void timedOut(WaitPath path) {
                try {
                    first.timedOut(path);
                } finally {
                    second.timedOut(path);
                }
            }

            @Override
            public void cancelled(WaitPath path) {
                try {
                    first.cancelled(path);
                } finally {
                    second.cancelled(path);
                }
            }

            @Override
            public void delivered(WaitPath path, long latencyNanos) {
                try {
                    first.delivered(path, latencyNanos);
                } finally {
                    second.delivered(path, latencyNanos);
                }
            }
        };
    }

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
