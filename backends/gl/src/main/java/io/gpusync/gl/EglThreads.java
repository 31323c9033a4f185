package io.gpusync.gl;

import io.gpusync.bindings.egl.Egl;
import io.gpusync.internal.ProcessServices;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The threads on which this backend makes its EGL and GL calls for a caller that has no EGL context current (an
 * engine's pool thread, a housekeeping lane, a virtual thread's carrier, any application thread). They never end.
 *
 * <p><b>Why.</b> NVIDIA's EGL tears a thread's EGL state down when the thread ends (or calls
 * {@code eglReleaseThread}), and that teardown deadlocks with a {@code vkDestroyDevice} running anywhere in the
 * process: the ending threads spin inside the driver, the destroy waits on its lock, and every later Vulkan, GL and
 * vkd3d call of the process queues behind them (README, "Driver hazards"). Pool threads end with their engine or
 * when idle, housekeeping lanes when idle, carriers when the scheduler shrinks: had they made EGL calls, each end
 * would be such a teardown. A thread that has a context current is the application's EGL thread; its calls stay on
 * it (a wait there may flush the producer's commands).
 *
 * <p><b>Lent to engines.</b> The waiters lend these threads to an engine ({@link #lender()}, the SPI's
 * {@code BlockingWaiter.waitThreads}): the engine's whole blocking wait runs on one of them, its slices inline,
 * and the wait completes there, so a wake costs no hand-off. At most {@link #MAX_LENT} such tasks run at once in
 * the process; beyond that the executor refuses, and the engine probes the wait instead.
 *
 * <p><b>Threading and blocking.</b> Thread-safe. {@link #run} blocks the caller, without a lock, until the action
 * has returned on one of these threads, and rethrows what it threw. Actions are bounded (a wait slice of at most
 * {@code WaitLoop.INTERRUPT_CHECK_NANOS}, a probe, a create or destroy call), so the caller waits through an
 * interrupt and keeps its flag, as it would inside the driver call itself. The lender's {@code execute} never
 * blocks. Threads are made on demand, up to the peak number of concurrent calls and lent tasks (one more when a call
 * arrives as a thread is finishing its task, before it is listed idle), and park when idle; never ending is the
 * point. A per-process service.
 */
final class EglThreads implements Executor {
    /** Lent tasks that may run at once in the process (each holds a thread for a whole wait). */
    static final int MAX_LENT = 32;
    private final ConcurrentLinkedQueue<Runnable> calls = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedDeque<Worker> idle = new ConcurrentLinkedDeque<>();
    private final AtomicInteger started = new AtomicInteger();
    private final AtomicInteger lent = new AtomicInteger();

    private EglThreads() {
    }

    private static EglThreads process() {
        return ProcessServices.get().service(EglThreads.class, EglThreads::new);
    }

    /**
     * Runs {@code action}, which makes EGL or GL calls, on the calling thread if it is one of these or has an EGL
     * context current, else on one of these; returns its result. The check itself leaves no driver state on the
     * calling thread: libglvnd answers {@code eglGetCurrentContext} from its own per-thread record, without calling
     * into the vendor's library.
     */
    static <T> T run(Supplier<T> action) {
        if (Thread.currentThread() instanceof Worker || !Egl.eglGetCurrentContext().equals(Egl.EGL_NO_CONTEXT())) {
            return action.get();
        }
        return process().call(action);
    }

    /** {@link #run(Supplier)} for an action without a result. */
    static void run(Runnable action) {
        run(() -> {
            action.run();
            return null;
        });
    }

    /** The executor that runs an engine's blocking waits on these threads (see the class comment). */
    static Executor lender() {
        return process();
    }

    /**
     * Runs {@code task} on one of these threads, never on the caller's; never blocks.
     *
     * @throws RejectedExecutionException if {@link #MAX_LENT} tasks are running, or no thread could be started
     */
    @Override
    public void execute(Runnable task) {
        if (lent.incrementAndGet() > MAX_LENT) {
            lent.decrementAndGet();
            throw new RejectedExecutionException(MAX_LENT + " waits already run on gpusync-egl threads");
        }
        try {
            hand(() -> {
                try {
                    task.run();
                } finally {
                    lent.decrementAndGet();
                }
            });
        } catch (RuntimeException | Error cannotStart) { // no native thread to be had (OutOfMemoryError)
            lent.decrementAndGet();
            throw new RejectedExecutionException("no gpusync-egl thread could be started", cannotStart);
        }
    }

    /** The number of these threads made so far in this process (none has ended). */
    static int started() {
        return process().started.get();
    }

    private <T> T call(Supplier<T> action) {
        Call<T> call = new Call<>(action, Thread.currentThread());
        hand(call);
        return call.join();
    }

    /** Queues {@code task} and wakes an idle thread for it, or starts one. */
    private void hand(Runnable task) {
        calls.add(task);
        Worker w = idle.pollFirst();
        if (w != null) {
            LockSupport.unpark(w);
        } else {
            Worker fresh = new Worker(this, started.incrementAndGet());
            try {
                fresh.start();
            } catch (RuntimeException | Error e) {
                if (calls.remove(task)) { // else a running thread took it: it runs after all
                    throw e;
                }
            }
        }
    }

    /** One call handed over: the worker sets the outcome, then unparks the caller. */
    private static final class Call<T> implements Runnable {
        private final Supplier<T> action;
        private final Thread caller;
        private T result;
        private Throwable failure;
        private volatile boolean done;

        Call(Supplier<T> action, Thread caller) {
            this.action = action;
            this.caller = caller;
        }

        @Override
        public void run() {
            try {
                result = action.get();
            } catch (Throwable t) {
                failure = t;
            }
            done = true;
            LockSupport.unpark(caller);
        }

        T join() {
            boolean interrupted = false;
            while (!done) {
                LockSupport.park(this);
                interrupted |= Thread.interrupted();
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (failure instanceof RuntimeException e) {
                throw e;
            }
            if (failure instanceof Error e) {
                throw e;
            }
            if (failure != null) { // a checked exception thrown past the compiler
                throw new IllegalStateException(failure);
            }
            return result;
        }
    }

    /**
     * A thread of the set: serves calls and lent tasks until there are none, parks as idle, and never ends (what a
     * task throws goes to the uncaught-exception handler; the interrupt flag it leaves is cleared).
     */
    private static final class Worker extends Thread {
        private final EglThreads threads;

        Worker(EglThreads threads, int n) {
            // it outlives whoever made it: inherit neither its thread locals nor its class loader
            super(null, null, "gpusync-egl-" + n, 0, false);
            this.threads = threads;
            setDaemon(true);
            setContextClassLoader(null);
        }

        @Override
        public void run() {
            while (true) {
                for (Runnable task; (task = threads.calls.poll()) != null; ) {
                    try {
                        task.run();
                    } catch (Throwable e) {
                        getUncaughtExceptionHandler().uncaughtException(this, e);
                    }
                    Thread.interrupted();
                }
                threads.idle.addFirst(this);
                if (!threads.calls.isEmpty() && threads.idle.remove(this)) {
                    continue; // a call came in before this thread was listed idle: serve it
                }
                LockSupport.park(threads);
                threads.idle.remove(this); // woken by a caller (which polled it off) or spuriously
            }
        }
    }
}
