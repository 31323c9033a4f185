package io.gpusync.benchmarks.jmh;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The baseline of {@link WaiterHandOffBenchmark}: the waiter pool's hand-off as it was before the lock-free one
 * (reactor-adapter's {@code WaiterPool} up to commit cd7b8d1), kept here only to be measured against it. A
 * permit counter bounds the tasks running; a task is handed to a {@link ThreadPoolExecutor} with no core
 * threads, an unbounded maximum and a {@link SynchronousQueue}, whose {@code execute} takes the executor's main
 * lock whenever it adds a thread ({@code addWorker}).
 */
final class ExecutorHandOff implements WaiterHandOffBenchmark.HandOff {
    private final ThreadPoolExecutor threads;
    private final AtomicInteger permits;

    ExecutorHandOff(int maxThreads, long keepAliveNanos, ThreadFactory factory) {
        this.threads = new ThreadPoolExecutor(0, Integer.MAX_VALUE, keepAliveNanos, TimeUnit.NANOSECONDS,
                new SynchronousQueue<>(), factory, (task, executor) -> {
                    throw new RejectedExecutionException("the waiter pool is shut down");
                });
        this.permits = new AtomicInteger(maxThreads);
    }

    @Override
    public boolean tryStart(Runnable task) {
        if (!tryAcquire()) {
            return false;
        }
        try {
            threads.execute(() -> {
                try {
                    task.run();
                } finally {
                    permits.incrementAndGet();
                }
            });
            return true;
        } catch (RejectedExecutionException shutDown) {
            permits.incrementAndGet();
            return false;
        }
    }

    private boolean tryAcquire() {
        while (true) {
            int n = permits.get();
            if (n <= 0) {
                return false;
            }
            if (permits.compareAndSet(n, n - 1)) {
                return true;
            }
        }
    }

    @Override
    public void shutdown() {
        threads.shutdownNow();
    }
}
