package io.gpusync.reactor;

import io.gpusync.BackendKind;
import io.gpusync.SyncWaiter;
import io.micrometer.observation.Observation;

import java.util.Locale;

/**
 * The {@link Observation.Context} of one engine wait ({@code gpusync.wait}): what a
 * {@link GpuSyncWaitObservationConvention} reads to name and tag it. Made by the engine for each wait observed
 * through the builder's {@link SyncEngine.Builder#observationRegistry observationRegistry}.
 *
 * <p>{@link #path()} is the path the wait is expected to take when the observation starts and the path it took
 * once it has stopped; {@link #outcome()} is {@code null} until the wait has terminated. The engine sets both on
 * the thread that terminates the wait, before the observation stops; handlers read them from their
 * {@code onStop}. Not thread-safe otherwise, like every {@code Observation.Context}.
 */
public final class GpuSyncWaitContext extends Observation.Context {

    /** How an observed wait ended: the {@code outcome} tag, in the words of the engine's meters. */
    public enum Outcome {
        /** The point was signalled. */
        COMPLETED,
        /** The wait timed out ({@link io.gpusync.SyncTimeoutException}). */
        TIMEOUT,
        /** The waiter failed: a driver or configuration error. */
        FAILED,
        /** The subscriber cancelled, or the engine was disposed ({@link io.gpusync.SyncCancelledException}). */
        CANCELLED;

        /** The tag value: the name in lower case ({@code completed}, {@code timeout}, ...). */
        public String tagValue() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final String engine;
    private final SyncWaiter waiter;
    private volatile WaitPath path;
    private volatile Outcome outcome;

    GpuSyncWaitContext(String engine, SyncWaiter waiter, WaitPath expectedPath) {
        this.engine = engine;
        this.waiter = waiter;
        this.path = expectedPath;
    }

    /** The name of the engine that waits ({@link SyncEngine#name()}). */
    public String engine() {
        return engine;
    }

    /** The waiter of the point waited on. */
    public SyncWaiter waiter() {
        return waiter;
    }

    /** The point's backend. */
    public BackendKind backend() {
        return waiter.backend();
    }

    /** The point's description: its waiter's {@code toString()}, as in the engine's error messages. */
    public String pointDescription() {
        return String.valueOf(waiter);
    }

    /** The path expected at the start; the path taken once the wait has terminated. */
    public WaitPath path() {
        return path;
    }

    /** How the wait ended, or {@code null} while it is pending. */
    public Outcome outcome() {
        return outcome;
    }

    void terminated(WaitPath taken, Outcome how) {
        this.path = taken;
        this.outcome = how;
    }
}
