package io.gpusync.reactor;

import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.Exceptions;
import reactor.core.scheduler.Scheduler;

import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The engine's own timer: one thread (made by the engine's thread factory on the first task) that runs delayed
 * tasks, so that no user code shares the thread that times waits out.
 *
 * <p>Why not a {@code ScheduledThreadPoolExecutor} or {@code Schedulers.fromExecutorService}: the first starts its
 * thread and shuts down under its main lock, and the second takes Reactor's global decorator lock, both from the
 * subscribing or disposing thread, which may be an event loop. Here scheduling is a lock-free offer and an unpark;
 * the heap of due tasks belongs to the timer thread alone; {@link #dispose()} sets a flag and unparks.
 *
 * <p><b>Threading.</b> Thread-safe; never blocks. A cancelled task is skipped when it comes due. Tasks run on the
 * timer thread in deadline order; one that throws goes to the thread's uncaught-exception handler. After
 * {@link #dispose()} scheduling is refused ({@link java.util.concurrent.RejectedExecutionException}) and the thread
 * ends without running what is left.
 */
final class EngineTimer implements Scheduler {
    private static final int NEW = 0;
    private static final int STARTED = 1;
    private static final int DISPOSED = 2;
    /** Past this many tasks in the heap (or twice what the last purge left), cancelled ones are dropped before due. */
    private static final int PURGE_AT = 4096;

    private final ThreadFactory threads;
    private final ConcurrentLinkedQueue<Task> submitted = new ConcurrentLinkedQueue<>();
    private final AtomicInteger state = new AtomicInteger(NEW);
    private final AtomicLong sequence = new AtomicLong();
    private volatile Thread thread;

    EngineTimer(ThreadFactory threads) {
        this.threads = threads;
    }

    @Override
    public Disposable schedule(Runnable task) {
        return schedule(task, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        if (state.get() == DISPOSED) {
            throw Exceptions.failWithRejected();
        }
        Task t = new Task(task, System.nanoTime() + unit.toNanos(Math.max(0, delay)), sequence.getAndIncrement());
        submitted.offer(t);
        if (state.get() == NEW && state.compareAndSet(NEW, STARTED)) {
            Thread th = threads.newThread(this::run);
            thread = th;
            th.start(); // it takes what was offered before it parks
        } else {
            LockSupport.unpark(thread); // null while the thread starts: it has not drained yet
        }
        return t;
    }

    @Override
    public long now(TimeUnit unit) {
        return unit.convert(System.nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public Worker createWorker() {
        Disposable.Composite tasks = Disposables.composite();
        return new Worker() {
            @Override
            public Disposable schedule(Runnable task) {
                return schedule(task, 0, TimeUnit.NANOSECONDS);
            }

            @Override
            public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
                if (tasks.isDisposed()) {
                    throw Exceptions.failWithRejected();
                }
                Disposable[] self = new Disposable[1];
                self[0] = EngineTimer.this.schedule(() -> {
                    tasks.remove(self[0]);
                    task.run();
                }, delay, unit);
                tasks.add(self[0]);
                return self[0];
            }

            @Override
            public void dispose() {
                tasks.dispose();
            }

            @Override
            public boolean isDisposed() {
                return tasks.isDisposed();
            }
        };
    }

    @Override
    public void dispose() {
        state.set(DISPOSED);
        LockSupport.unpark(thread);
    }

    @Override
    public boolean isDisposed() {
        return state.get() == DISPOSED;
    }

    private void run() {
        PriorityQueue<Task> heap = new PriorityQueue<>();
        int purgeAt = PURGE_AT;
        while (state.get() != DISPOSED) {
            for (Task t; (t = submitted.poll()) != null; ) {
                if (!t.cancelled) {
                    heap.add(t);
                }
            }
            if (heap.size() > purgeAt) { // amortised: the next purge waits for the heap to double again
                heap.removeIf(t -> t.cancelled);
                purgeAt = Math.max(PURGE_AT, 2 * heap.size());
            }
            Task head = heap.peek();
            long now = System.nanoTime();
            if (head != null && (head.cancelled || head.due - now <= 0)) {
                heap.poll();
                if (!head.cancelled) {
                    runOne(head);
                }
                continue;
            }
            if (!submitted.isEmpty()) {
                continue;
            }
            if (head == null) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, head.due - now);
            }
        }
    }

    private static void runOne(Task t) {
        try {
            t.task.run();
        } catch (Throwable e) {
            Thread me = Thread.currentThread();
            me.getUncaughtExceptionHandler().uncaughtException(me, e);
        }
    }

    /** A task and its deadline ({@link System#nanoTime()}); ties run in the order scheduled. */
    private static final class Task implements Disposable, Comparable<Task> {
        final Runnable task;
        final long due;
        final long order;
        volatile boolean cancelled;

        Task(Runnable task, long due, long order) {
            this.task = task;
            this.due = due;
            this.order = order;
        }

        @Override
        public int compareTo(Task o) {
            int byDue = Long.compare(due - o.due, 0);
            return byDue != 0 ? byDue : Long.compare(order, o.order);
        }

        @Override
        public void dispose() {
            cancelled = true;
        }

        @Override
        public boolean isDisposed() {
            return cancelled;
        }
    }
}
