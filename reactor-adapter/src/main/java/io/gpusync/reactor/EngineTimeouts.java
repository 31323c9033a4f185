package io.gpusync.reactor;

import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Times out an engine's waits: on the builder's {@code timer} with a task per wait, or, by default, on
 * {@link Schedulers#parallel()} (looked up per wait, so virtual time drives it) through one {@link TimeoutQueue}
 * per distinct duration. Thread-safe; never blocks.
 */
final class EngineTimeouts {
    /** Distinct durations that get a queue; waits with further durations get a task each. */
    static final int MAX_QUEUES = 64;

    private final Scheduler timer; // null: the default
    private final ConcurrentHashMap<Long, TimeoutQueue> queues = new ConcurrentHashMap<>();

    EngineTimeouts(Scheduler timer) {
        this.timer = timer;
    }

    /** Times {@code wait} out after {@code nanos}; a timer that refuses the task fails the wait. */
    void arm(PendingWait wait, long nanos) {
        Scheduler s = timer != null ? timer : Schedulers.parallel();
        TimeoutQueue queue = timer == null ? queue(nanos, s) : null;
        if (queue != null) {
            queue.add(wait);
            return;
        }
        try {
            wait.setTimer(s.schedule(wait, nanos, TimeUnit.NANOSECONDS));
        } catch (RuntimeException rejected) {
            wait.failed(rejected);
        }
    }

    /** The queues, for disposal (a live view). */
    Collection<TimeoutQueue> queues() {
        return queues.values();
    }

    /** Waits held by the queues (active, or terminated and not yet dropped). */
    int held() {
        int held = 0;
        for (TimeoutQueue q : queues.values()) {
            held += q.held();
        }
        return held;
    }

    /**
     * The queue of waits with this timeout on the default timer {@code s} (a new queue when {@code s} replaced
     * the scheduler of the last one), or {@code null} past {@value #MAX_QUEUES} distinct durations.
     */
    private TimeoutQueue queue(long nanos, Scheduler s) {
        TimeoutQueue q = queues.get(nanos);
        if (q == null && queues.size() < MAX_QUEUES) {
            q = queues.computeIfAbsent(nanos, d -> new TimeoutQueue(d, s));
        } else if (q != null && q.scheduler() != s) {
            // the default timer was replaced (Reactor's virtual time, Schedulers.resetFactory): a queue on the new
            // one; the old queue still times out the waits it holds on its own timer
            TimeoutQueue fresh = new TimeoutQueue(nanos, s);
            q = queues.replace(nanos, q, fresh) ? fresh : queues.get(nanos);
        }
        return q != null && q.scheduler() == s ? q : null;
    }
}
