package io.gpusync.reactor;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * The threads of the {@link WaiterPool}: runs at most {@code maxTasks} tasks at once, each on a platform thread of
 * its own, and hands a task to a thread without a lock, so that a subscribing event loop never waits for another
 * thread (a {@code ThreadPoolExecutor} takes its main lock to add a worker, and a subscriber parked on it).
 *
 * <p>How: a permit counter bounds the tasks running; idle threads sit on a lock-free stack (Treiber; a fresh node
 * per idle spell, so no node comes back and no ABA), each parked on its own slot. {@link #tryStart} takes a
 * permit, pops an idle thread, puts the task in its slot (a CAS from empty) and unparks it; with no idle thread it
 * starts a new one. A thread gives its task's permit back as soon as the task returns, then goes idle: a subscriber
 * that takes the permit in between starts another thread rather than be refused (a refused wait is probed
 * instead), so the threads may briefly outnumber the permits, and the extra ones retire. The most recently idle
 * thread is reused first; one idle for {@code keepAlive} retires (its slot CAS'd from empty to retired, so a task
 * cannot land there; its stale node is dropped by the next pop).
 *
 * <p>Thread-safe. {@link #tryStart} never blocks and takes no lock (it may start a thread); {@link #shutdown}
 * neither: idle threads end at once, busy ones when their task returns.
 */
final class WaiterThreads {
    /** In a slot: the thread has retired; no task may be put there. */
    private static final Runnable RETIRED = () -> { };

    private final AtomicInteger permits;
    private final AtomicReference<Idle> idle = new AtomicReference<>();
    private final long keepAliveNanos;
    private final ThreadFactory factory;
    private volatile boolean stopped;

    WaiterThreads(int maxTasks, long keepAliveNanos, ThreadFactory factory) {
        this.permits = new AtomicInteger(maxTasks);
        this.keepAliveNanos = keepAliveNanos;
        this.factory = factory;
    }

    /**
     * Runs {@code task} on a thread of its own, or returns {@code false} at once if {@code maxTasks} tasks are
     * running, if the threads are shut down, or if a needed thread could not be started.
     */
    boolean tryStart(Runnable task) {
        if (!tryAcquire()) {
            return false;
        }
        if (stopped) {
            permits.incrementAndGet();
            return false;
        }
        for (Idle top; (top = pop()) != null; ) {
            Worker w = top.worker;
            if (w.slot.compareAndSet(null, task)) {
                LockSupport.unpark(w.thread);
                return true;
            }
            // it retired meanwhile: its node was stale
        }
        try {
            Worker w = new Worker(task);
            w.thread = factory.newThread(w);
            w.thread.start();
            return true;
        } catch (Throwable cannotStart) { // no native thread to be had (OutOfMemoryError): the caller overflows
            permits.incrementAndGet();
            return false;
        }
    }

    /**
     * Runs {@code task} through {@code lend} (which hands it to a backend's thread, or returns {@code false}),
     * under the same bound as the tasks on this set's own threads; {@code false} at once if {@code maxTasks}
     * tasks are running, if the threads are shut down, or if {@code lend} refused it.
     */
    boolean tryLend(Runnable task, Predicate<Runnable> lend) {
        if (!tryAcquire()) {
            return false;
        }
        Runnable counted = () -> {
            try {
                task.run();
            } finally {
                permits.incrementAndGet();
            }
        };
        boolean lent = false;
        try {
            lent = !stopped && lend.test(counted);
            return lent;
        } finally {
            if (!lent) {
                permits.incrementAndGet();
            }
        }
    }

    /** Stops the threads: idle ones end at once, busy ones after their task; later tasks are refused. */
    void shutdown() {
        stopped = true;
        for (Idle top; (top = pop()) != null; ) {
            LockSupport.unpark(top.worker.thread);
        }
    }

    private boolean tryAcquire() {
        for (int n = permits.get(); n > 0; n = permits.get()) {
            if (permits.compareAndSet(n, n - 1)) {
                return true;
            }
        }
        return false;
    }

    private void push(Worker w) {
        Idle top;
        Idle node;
        do {
            top = idle.get();
            node = new Idle(w, top);
        } while (!idle.compareAndSet(top, node));
    }

    private Idle pop() {
        Idle top;
        do {
            top = idle.get();
            if (top == null) {
                return null;
            }
        } while (!idle.compareAndSet(top, top.next));
        return top;
    }

    /** A node of the idle stack: one idle spell of a thread. */
    private record Idle(Worker worker, Idle next) {
    }

    private final class Worker implements Runnable {
        /** The next task; {@code null} while idle (or busy), {@link #RETIRED} once retired. */
        final AtomicReference<Runnable> slot = new AtomicReference<>();
        volatile Thread thread;
        private Runnable first;

        Worker(Runnable first) {
            this.first = first;
        }

        @Override
        public void run() {
            Runnable task = first;
            first = null; // hold no finished wait while idle
            for (; task != null; task = next()) {
                try {
                    task.run();
                } catch (Throwable e) {
                    Thread me = Thread.currentThread();
                    me.getUncaughtExceptionHandler().uncaughtException(me, e);
                }
            }
        }

        /** Gives the task's permit back and goes idle; the next task, or {@code null}: retire. */
        private Runnable next() {
            permits.incrementAndGet();
            slot.set(null);
            push(this);
            long deadline = System.nanoTime() + keepAliveNanos;
            while (true) {
                Runnable task = slot.get();
                if (task != null) {
                    return task;
                }
                long left = deadline - System.nanoTime();
                // stopped is read after the push: a shutdown either sees this thread on the stack, or is seen here
                if ((stopped || left <= 0) && slot.compareAndSet(null, RETIRED)) {
                    return null;
                }
                if (!stopped && left > 0) {
                    LockSupport.parkNanos(this, left);
                }
            }
        }
    }
}
