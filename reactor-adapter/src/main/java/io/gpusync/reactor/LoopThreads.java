package io.gpusync.reactor;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;

/**
 * The thread factory of an engine's own loops, which remembers the (few, long-lived) threads it made, so that
 * shutting the loops down can wait until those threads have really ended — not only until the executor says
 * it has terminated, which it says from its last thread just before that thread exits. Thread-safe.
 */
final class LoopThreads implements ThreadFactory {
    private final ThreadFactory threads;
    private final List<Thread> made = new CopyOnWriteArrayList<>();

    LoopThreads(ThreadFactory threads) {
        this.threads = threads;
    }

    @Override
    public Thread newThread(Runnable r) {
        Thread t = threads.newThread(r);
        made.add(t);
        return t;
    }

    /** Whether the calling thread is one of these. */
    boolean isCurrent() {
        return made.contains(Thread.currentThread());
    }

    /** Waits until every thread made has ended, or until {@code deadlineNanos} ({@link System#nanoTime()}). */
    void join(long deadlineNanos) {
        boolean interrupted = false;
        for (Thread t : made) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0 || t == Thread.currentThread()) {
                continue;
            }
            try {
                t.join(java.time.Duration.ofNanos(left));
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
