package io.gpusync.examples.device;

import io.gpusync.SyncPoint;

import java.util.ArrayDeque;
import java.util.OptionalLong;

/**
 * The work submitted to one in-order queue that has not been seen finished yet, oldest first: what a device
 * needs to say how long its queue has been holding work ({@link Device#oldestUnfinishedSubmission()}).
 *
 * <p>Finished work is found by probing the head's point ({@code SyncWaiter.isSignaled()}, never a wait) each time
 * work is logged or the age is asked for; the queue being in order, everything behind an unfinished head is
 * unfinished too, so the log holds exactly the queue's backlog. A point whose probe fails (its device closed or
 * lost) counts as finished: it is no longer queued work. Thread-safe (one lock, held only for the probes).
 */
final class SubmissionLog {
    private record Submission(SyncPoint point, long submittedNanos) {
    }

    private final ArrayDeque<Submission> unfinished = new ArrayDeque<>();

    /** Logs {@code point}, submitted at {@code submittedNanos} ({@link System#nanoTime()}). */
    synchronized void submitted(SyncPoint point, long submittedNanos) {
        dropFinished();
        unfinished.addLast(new Submission(point, submittedNanos));
    }

    /** When the oldest unfinished work was submitted ({@link System#nanoTime()}), empty if none is left. */
    synchronized OptionalLong oldestUnfinished() {
        dropFinished();
        Submission head = unfinished.peekFirst();
        return head == null ? OptionalLong.empty() : OptionalLong.of(head.submittedNanos());
    }

    private void dropFinished() {
        while (!unfinished.isEmpty() && finished(unfinished.peekFirst().point())) {
            unfinished.pollFirst();
        }
    }

    private static boolean finished(SyncPoint point) {
        try {
            return point.waiter().isSignaled();
        } catch (RuntimeException failedOrClosed) {
            return true;
        }
    }

    /** The earlier of two submission times, either possibly absent. */
    static OptionalLong earlier(OptionalLong a, OptionalLong b) {
        if (a.isEmpty()) {
            return b;
        }
        if (b.isEmpty()) {
            return a;
        }
        return a.getAsLong() - b.getAsLong() <= 0 ? a : b;
    }
}
