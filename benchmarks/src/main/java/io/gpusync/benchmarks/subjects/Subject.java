package io.gpusync.benchmarks.subjects;

import io.gpusync.SyncWaiter;

/**
 * A producer of sync points the benchmarks can wait on and signal: a host timeline, an eventfd, a Vulkan
 * timeline semaphore (host or queue signal), an OpenCL user event or a marker behind one, an EGL reusable
 * sync, a CUDA timeline value or event behind a host-memory gate. Adding a backend to the harness and to JMH
 * is one class implementing this interface plus one line in {@link Subjects}; a subject whose driver is
 * missing says why in {@link #unavailableReason()} and the harness skips it with that reason.
 *
 * <p>Points come in {@link Stream}s; the points of one stream are signalled in the order they were made
 * (a GPU queue's timeline only goes forwards).
 */
public interface Subject {

    /** Short name used on the command line and in reports, e.g. {@code host-timeline}. */
    String name();

    /** One line for the report: what a point is and how it is signalled. */
    String description();

    /**
     * The most points this subject can have alive at once (e.g. fds under {@code ulimit -n}), or
     * {@link Integer#MAX_VALUE}.
     */
    default int maxLivePoints() {
        return Integer.MAX_VALUE;
    }

    /**
     * Why this subject cannot run here (no driver, no device), or {@code null} if it can. The harness skips a
     * subject's cells with this reason (printed and written into the report) instead of failing. May open
     * the backend once to find out (cached).
     */
    default String unavailableReason() {
        return null;
    }

    /** A new stream of points. */
    Stream newStream();

    /** A sequence of points on one primitive (a timeline) or of separate primitives (eventfds). */
    interface Stream extends AutoCloseable {

        /** The next, not yet signalled point. */
        Point next();

        /** Signals every point made so far (cleanup). */
        void signalAll();

        /**
         * Native registrations (parked threads, callbacks) pending on this stream's primitives now, or
         * {@code -1} when the API cannot tell (an eventfd).
         */
        long registrations();

        /** Frees the primitives. */
        @Override
        void close();
    }

    /** One point: its waiter and the way to signal it from the host. */
    interface Point {
        SyncWaiter waiter();

        /** Signals this point (and, on a timeline, every earlier one). Never blocks. */
        void signal();

        /** Makes the point signalled already, for benchmarks of the signalled fast path. */
        default void presignal() {
            signal();
        }

        /** Undoes {@link #presignal()} where the primitive allows it (an eventfd drain); else no-op. */
        default void reset() {
        }
    }
}
