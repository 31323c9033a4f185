package io.gpusync.reactor;

import io.gpusync.spi.Timeouts;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The timeouts of one engine's waits. On the default timer ({@link Schedulers#parallel()}, looked up per wait so
 * that {@code StepVerifier.withVirtualTime} drives it) the waits that share a duration share one
 * {@link TimeoutQueue}, so that a wait that terminates first costs its timeout nothing; on a timer given to the
 * builder, or past {@value #MAX_QUEUES} distinct durations, each wait gets a task of its own.
 *
 * <p><b>Threading.</b> Thread-safe; never blocks beyond a queue's short lock. A timer that refuses a task fails
 * the wait with the refusal.
 */
final class EngineTimeouts {
    private static final int MAX_QUEUES = 64;

    /** The builder's timer, or {@code null}: the default timer. */
    private final Scheduler timer;
    /** Timeouts on the default timer, one FIFO per distinct duration. */
    private final ConcurrentHashMap<Long, TimeoutQueue> queues = new ConcurrentHashMap<>();

    EngineTimeouts(Scheduler timer) {
        this.timer = timer;
    }

    /** Starts the timeout of {@code wait}, which has started (nothing for no timeout, a zero one or a done wait). */
    void start(PendingWait wait, Duration timeout) {
        if (Timeouts.isForever(timeout) || timeout.isZero() || wait.isDone()) {
            return;
        }
        long nanos = timeout.toNanos();
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

    /** Waits held by the queues (active, or terminated and not yet dropped); for tests. */
    int held() {
        int held = 0;
        for (TimeoutQueue q : queues.values()) {
            held += q.held();
        }
        return held;
    }

    /** Stops every queue's timer task (the engine's disposal terminates the waits themselves). */
    void dispose() {
        queues.values().forEach(TimeoutQueue::dispose);
    }
}
