package io.gpusync.reactor;

/**
 * Where a terminated {@link PendingWait} reports its outcome: the engine's {@link EngineWaits} (which forgets the wait,
 * counts it and signals the subscriber), or a recorder in the concurrency tests.
 */
interface OutcomeSink {

    /**
     * The wait has terminated and its registration has been released. Called exactly once per wait.
     *
     * @param outcome {@code null} if the point was signalled, {@link PendingWait#CANCELLED} if the subscriber
     *                cancelled (nothing to signal), otherwise the error to signal
     */
    void terminated(PendingWait wait, Throwable outcome);
}
