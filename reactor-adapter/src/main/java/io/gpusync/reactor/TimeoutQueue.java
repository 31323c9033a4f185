package io.gpusync.reactor;

import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * The timeouts of the waits that share one duration, in deadline order: a FIFO, since a wait added later has
 * the same duration and so a later deadline. One task on the timer scheduler serves the whole queue (at the
 * oldest deadline), instead of one scheduled task per wait.
 *
 * <p>Why: cancelling a per-wait task on a {@code ScheduledThreadPoolExecutor} takes its lock and re-sorts its
 * heap, on the thread that completed the wait — the signalling thread of a burst. Here a wait that terminates
 * does nothing for its timeout: a terminated wait in the queue is skipped when the timer reaches it and
 * dropped when the queue compacts (on an {@link #add} that finds the ring full: amortised O(1), on the
 * subscribing thread).
 *
 * <p><b>Threading.</b> Thread-safe: {@link #add} from any subscribing thread and the timer task share one
 * short lock; an expired wait is timed out ({@link PendingWait#run()}) on the timer's thread, outside the lock.
 * Never blocks beyond that lock. If the timer refuses the task, every wait held fails with the refusal (none is
 * left without its timeout). {@link #dispose()} stops the timer task (the engine's dispose terminates the
 * waits themselves).
 */
final class TimeoutQueue implements Runnable, Disposable {
    private final long durationNanos;
    private final Scheduler scheduler;
    private PendingWait[] waits = new PendingWait[64];
    private long[] deadlines = new long[64];
    private int head;
    private int size;
    /** Whether a timer task is scheduled (or being scheduled). */
    private boolean scheduled;
    private Disposable task;
    private boolean disposed;

    TimeoutQueue(long durationNanos, Scheduler scheduler) {
        this.durationNanos = durationNanos;
        this.scheduler = scheduler;
    }

    /** Times {@code wait} out {@code durationNanos} from now unless it terminates first. */
    void add(PendingWait wait) {
        boolean schedule;
        synchronized (this) {
            if (disposed) {
                return;
            }
            if (size == waits.length) {
                compactOrGrow();
            }
            int slot = (head + size) & (waits.length - 1);
            waits[slot] = wait;
            deadlines[slot] = scheduler.now(TimeUnit.NANOSECONDS) + durationNanos;
            size++;
            schedule = !scheduled;
            scheduled = true;
        }
        if (schedule) {
            schedule(durationNanos);
        }
    }

    /** The timer task: times out every expired wait, then re-arms for the oldest deadline still pending. */
    @Override
    public void run() {
        PendingWait[] expired = null;
        int count = 0;
        long delay = -1;
        synchronized (this) {
            if (disposed) {
                return;
            }
            long now = scheduler.now(TimeUnit.NANOSECONDS);
            int mask = waits.length - 1;
            while (size > 0) {
                PendingWait w = waits[head];
                if (!w.isDone()) {
                    long left = deadlines[head] - now;
                    if (left > 0) {
                        delay = left;
                        break;
                    }
                    if (expired == null) {
                        expired = new PendingWait[Math.min(size, 1024)];
                    } else if (count == expired.length) {
                        expired = Arrays.copyOf(expired, Math.min(count * 2, count + size));
                    }
                    expired[count++] = w;
                }
                waits[head] = null;
                head = (head + 1) & mask;
                size--;
            }
            scheduled = delay >= 0;
        }
        if (delay >= 0) {
            schedule(delay);
        }
        for (int i = 0; i < count; i++) {
            expired[i].run(); // times out a wait still active (it checks again); never throws
        }
    }

    private void schedule(long delayNanos) {
        try {
            Disposable t = scheduler.schedule(this, delayNanos, TimeUnit.NANOSECONDS);
            synchronized (this) {
                task = t;
            }
        } catch (RuntimeException rejected) {
            // the timer refused: fail every wait held (as a per-wait timer's refusal fails its wait), never lose one
            PendingWait[] held;
            int count;
            synchronized (this) {
                scheduled = false;
                count = size;
                held = new PendingWait[count];
                int mask = waits.length - 1;
                for (int i = 0; i < count; i++) {
                    int slot = (head + i) & mask;
                    held[i] = waits[slot];
                    waits[slot] = null;
                }
                head = 0;
                size = 0;
            }
            for (PendingWait w : held) {
                w.failed(rejected); // a wait already terminated ignores it
            }
        }
    }

    /** Under the lock, ring full: drop terminated waits; grow only if that frees less than half. */
    private void compactOrGrow() {
        int mask = waits.length - 1;
        int live = 0;
        for (int i = 0; i < size; i++) {
            int from = (head + i) & mask;
            PendingWait w = waits[from];
            if (!w.isDone()) {
                int to = (head + live) & mask;
                waits[to] = w;
                deadlines[to] = deadlines[from];
                live++;
            }
        }
        for (int i = live; i < size; i++) {
            waits[(head + i) & mask] = null;
        }
        size = live;
        if (live * 2 > waits.length) {
            PendingWait[] w = new PendingWait[waits.length * 2];
            long[] d = new long[waits.length * 2];
            for (int i = 0; i < size; i++) {
                w[i] = waits[(head + i) & mask];
                d[i] = deadlines[(head + i) & mask];
            }
            waits = w;
            deadlines = d;
            head = 0;
        }
    }

    Scheduler scheduler() {
        return scheduler;
    }

    /** Waits held (active or terminated and not yet dropped); for tests. */
    synchronized int held() {
        return size;
    }

    @Override
    public void dispose() {
        Disposable t;
        synchronized (this) {
            disposed = true;
            t = task;
            Arrays.fill(waits, null);
            size = 0;
        }
        if (t != null) {
            t.dispose();
        }
    }
}
