package io.gpusync.reactor;

import reactor.core.scheduler.Schedulers;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Hands completions seen on driver threads to the engine's event loops in batches: tasks join one queue, and at most
 * one drain task is on the loops at a time. A driver thread that completes a thousand waits in one pass (a CUDA
 * stream's sweep, a timeline value that covers many waits) therefore wakes a loop once, not a thousand times: handed
 * over one by one, a loop that keeps up goes back to sleep after each task, and every hand-off pays a wake-up.
 *
 * <p>A drain runs at most {@value #DRAIN_MAX} tasks, then hands itself back to the loops, so that a long burst does
 * not hold a loop away from its other work. If the loops refuse the drain (a user's group that has been shut down),
 * it runs on {@link Schedulers#boundedElastic()}, and if that refuses too, in place on the calling thread: a queued
 * completion is never dropped.
 *
 * <p>Thread-safe; {@link #execute} never blocks.
 */
final class LoopHandOff implements Executor {
    static final int DRAIN_MAX = 1024;
    private final Executor loops;
    private final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
    /** A drain is on the loops (or running): later tasks only join the queue. */
    private final AtomicBoolean draining = new AtomicBoolean();
    private final Runnable drain = this::drain;

    LoopHandOff(Executor loops) {
        this.loops = loops;
    }

    @Override
    public void execute(Runnable task) {
        queue.add(task);
        if (draining.compareAndSet(false, true)) {
            schedule();
        }
    }

    private void schedule() {
        try {
            loops.execute(drain);
            return;
        } catch (RuntimeException refused) {
            // the loops are shutting down (a user's group, or the engine's during dispose)
        }
        try {
            Schedulers.boundedElastic().schedule(drain);
        } catch (RuntimeException refusedToo) {
            drain(); // last resort: late on this thread beats never
        }
    }

    private void drain() {
        int ran = 0;
        while (true) {
            Runnable task;
            while (ran < DRAIN_MAX && (task = queue.poll()) != null) {
                ran++;
                try {
                    task.run();
                } catch (RuntimeException | Error t) { // one completion must not strand the others
                    System.getLogger(LoopHandOff.class.getName()).log(System.Logger.Level.WARNING,
                            "a completion handed to the loops threw", t);
                }
            }
            if (ran >= DRAIN_MAX && !queue.isEmpty()) {
                schedule(); // still draining: give the loop back to its other work, continue in a fresh task
                return;
            }
            draining.set(false);
            if (queue.isEmpty() || !draining.compareAndSet(false, true)) {
                return; // nothing left, or a new task's execute scheduled a drain of its own
            }
        }
    }
}
