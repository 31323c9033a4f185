package io.gpusync.reactor;

import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine's hand-off threads when Netty 4.2 with native epoll is not on the class path: {@code eventLoopThreads}
 * daemon threads (started on first use, one per hand-off until all run; like event loops kept until the engine is
 * disposed) that take driver callbacks off the driver's thread. Watches no fds: fd waits then take
 * {@link WaitPath#BLOCKING}.
 *
 * <p>Why not a {@code ThreadPoolExecutor}: its {@code execute} takes the executor's main lock to add a thread and
 * a {@code LinkedBlockingQueue}'s lock to queue, and its {@code shutdown} the main lock, and hand-offs come from any
 * thread (a driver's, or an event loop inside a driver call). Here a hand-off is a lock-free offer to a
 * {@link LinkedTransferQueue} (plus a thread start while not all run); shutdown queues one stop mark per thread
 * and returns.
 */
final class JdkLoops implements EngineLoops {
    /** Taken by a thread: it stops (after every hand-off queued before it, which still delivers its outcome). */
    private static final Runnable STOP = () -> { };

    private final LinkedTransferQueue<Runnable> tasks = new LinkedTransferQueue<>();
    private final int size;
    private final ThreadFactory threads;
    private final AtomicInteger started = new AtomicInteger();
    private volatile boolean stopped;

    JdkLoops(int threads, ThreadFactory threadFactory) {
        this.size = threads;
        this.threads = threadFactory;
    }

    @Override
    public void execute(Runnable task) {
        if (stopped) {
            throw new RejectedExecutionException("the engine's hand-off threads are shut down");
        }
        tasks.offer(task);
        if (stopped && tasks.remove(task)) { // raced a shutdown: it may be behind every stop mark, so refuse it
            throw new RejectedExecutionException("the engine's hand-off threads are shut down");
        }
        for (int n = started.get(); n < size; n = started.get()) {
            if (started.compareAndSet(n, n + 1)) {
                threads.newThread(this::run).start();
                break;
            }
        }
    }

    private void run() {
        while (true) {
            Runnable task;
            try {
                task = tasks.take();
            } catch (InterruptedException e) {
                continue; // nobody but this class knows the thread; only a stop mark ends it
            }
            if (task == STOP) {
                return;
            }
            try {
                task.run();
            } catch (Throwable e) {
                Thread me = Thread.currentThread();
                me.getUncaughtExceptionHandler().uncaughtException(me, e);
            }
        }
    }

    @Override
    public WaitStrategy fdWatcher() {
        return null;
    }

    /** Refuses later hand-offs and queues a stop mark per thread behind those queued; never waits. */
    @Override
    public void shutdown() {
        stopped = true;
        for (int i = 0; i < size; i++) {
            tasks.offer(STOP);
        }
    }

    @Override
    public String toString() {
        return "JdkLoops[" + size + " threads]";
    }
}
