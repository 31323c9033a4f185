package io.gpusync.reactor;

import io.gpusync.spi.Timeouts;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The timeouts of one engine's waits. The default timer is a thread of the engine's own
 * ({@code gpusync-<engine>-timer-1}, started on the first timeout), so that user code that blocks a
 * {@link Schedulers#parallel()} worker cannot hold a wait past its timeout; while Reactor's scheduler factory is
 * replaced ({@code StepVerifier.withVirtualTime}, or an application's own), looked up per wait, the replaced
 * {@code parallel()} runs them instead, as it would Reactor's own timed operators. On the default timer the waits
 * that share a duration share one {@link TimeoutQueue}, so that a wait that terminates first costs its timeout
 * nothing; on a timer given to the builder, or past {@value #MAX_QUEUES} distinct durations, each wait gets a
 * task of its own.
 *
 * <p><b>Threading.</b> Thread-safe; never blocks beyond a queue's short lock (making the engine's timer and
 * disposing it are lock-free: an {@link EngineTimer}). A timer that refuses a task fails the wait with the refusal.
 * {@link #dispose()} stops the timer thread without waiting for it.
 */
final class EngineTimeouts {
    private static final int MAX_QUEUES = 64;
    /** The class of {@code parallel()} that Reactor's own factory makes (made here without starting a thread). */
    private static final Class<?> FACTORY_PARALLEL = new Schedulers.Factory() { }.newParallel(1, Thread::new).getClass();

    /** The builder's timer, or {@code null}: the default timer. */
    private final Scheduler timer;
    private final ThreadFactory timerThreads;
    /** Timeouts on the default timer, one FIFO per distinct duration. */
    private final ConcurrentHashMap<Long, TimeoutQueue> queues = new ConcurrentHashMap<>();
    /** The engine's own timer: {@code null} before the first timeout, then the timer, then {@link #disposed}. */
    private final AtomicReference<Object> own = new AtomicReference<>();
    /** What {@link #own} holds once disposed. */
    private final Object disposed = new Object();

    EngineTimeouts(Scheduler timer, ThreadFactory timerThreads) {
        this.timer = timer;
        this.timerThreads = timerThreads;
    }

    /** Starts the timeout of {@code wait}, which has started (nothing for no timeout, a zero one or a done wait). */
    void start(PendingWait wait, Duration timeout) {
        if (Timeouts.isForever(timeout) || timeout.isZero() || wait.isDone()) {
            return;
        }
        long nanos = timeout.toNanos();
        Scheduler s = timer != null ? timer : defaultTimer();
        if (s == null) { // disposed: the disposal ends the wait
            return;
        }
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

    /** Reactor's {@code parallel()} while its factory is replaced, else the engine's own timer ({@code null} once disposed). */
    private Scheduler defaultTimer() {
        Scheduler parallel = Schedulers.parallel();
        Object made = parallel instanceof Supplier<?> cached ? cached.get() : parallel;
        if (made.getClass() != FACTORY_PARALLEL) {
            return parallel;
        }
        Object current = own.get();
        if (current == null) {
            EngineTimer fresh = new EngineTimer(timerThreads); // no thread until its first task
            current = own.compareAndExchange(null, fresh);
            if (current == null) {
                return fresh;
            }
        }
        return current instanceof Scheduler timerNow ? timerNow : null;
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

    /**
     * Stops every queue's timer task and the engine's own timer thread, without waiting (the engine's disposal
     * terminates the waits themselves).
     */
    void dispose() {
        Object stopping = own.getAndSet(disposed);
        queues.values().forEach(TimeoutQueue::dispose);
        if (stopping instanceof Scheduler timerNow) {
            timerNow.dispose();
        }
    }
}
