package io.gpusync.reactor.soak;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;

/**
 * One sync point the soak owns, used the way the backend's documentation tells an application to: what the
 * engine waits on, how the host makes it signalled, and how it is let go.
 *
 * <p>{@link #closeWaiter()} is the application closing the awaited handle, possibly while a wait on it is
 * pending; the primitive itself stays alive through the ticket's own view until {@link #finish()}, which
 * first makes sure the driver is done with it (the signal is given, work that signals it has landed) and then
 * drops everything. Every method is safe to call from any thread, in any order, more than once.
 */
interface Ticket {
    /** The backend and kind, for the report. */
    String source();

    /** What a single wait awaits. */
    SyncWaiter waiter();

    /** The point, for group operators; {@code null} where there is none (a {@code VkFence}). */
    SyncPoint point();

    /** Whether GPU work signals it by itself: then it cannot be left unsignalled to time out. */
    boolean signalsItself();

    /**
     * Whether another ticket decides this one's outcome too (a command behind earlier ones on an in-order queue or
     * stream: held until they pass, failed when one fails): its outcome is then not checked, only that it ends.
     */
    default boolean dependsOnOthers() {
        return false;
    }

    /** Makes the point signalled (a host signal or a queue submission); once; no-op after {@link #finish()}. */
    void signal();

    /** Whether {@link #fail()} is supported. */
    default boolean canFail() {
        return false;
    }

    /** Ends the point with a driver-side error instead of a signal (a failed user event, a failed timeline). */
    default void fail() {
        throw new UnsupportedOperationException(source() + " cannot fail");
    }

    /** The application closes the awaited handle (a wait on it may be pending). */
    void closeWaiter();

    /** Signals it if nobody did, waits (bounded) for submitted work to land, and releases everything. */
    void finish();
}
