package io.gpusync.reactor;

import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.BlockingWaiter;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * {@link WaitPath#BLOCKING}: the dedicated waiter-thread pool. Platform threads (native calls pin virtual
 * threads) block in the waiter's native wait in slices of at most {@code slice}, and look at the wait's
 * state between slices — so a cancelled or timed-out wait holds its thread for at most one slice. Threads
 * are created on demand up to {@code maxThreads} and retire after {@code keepAlive} idle; a wait that
 * finds every thread busy is served by the probe scheduler instead of queueing behind long waits.
 */
final class WaiterPool implements WaitStrategy {
    private final ThreadPoolExecutor threads;
    private final Duration slice;
    private final WaitStrategy overflow;

    WaiterPool(int maxThreads, Duration slice, Duration keepAlive, ThreadFactory factory, WaitStrategy overflow) {
        this.threads = new ThreadPoolExecutor(0, maxThreads, keepAlive.toNanos(), TimeUnit.NANOSECONDS,
                new SynchronousQueue<>(), factory);
        this.slice = slice;
        this.overflow = overflow;
    }

    @Override
    public WaitPath path() {
        return WaitPath.BLOCKING;
    }

    @Override
    public boolean accepts(SyncWaiter waiter) {
        return waiter instanceof BlockingWaiter;
    }

    @Override
    public void start(PendingWait wait) {
        try {
            threads.execute(() -> serve(wait));
        } catch (RejectedExecutionException saturatedOrShutDown) {
            wait.strategy = overflow;
            overflow.start(wait);
        }
    }

    private void serve(PendingWait wait) {
        while (!wait.isDone()) {
            try {
                wait.waiter.await(slice);
                wait.signalled();
                return;
            } catch (SyncTimeoutException sliceOver) {
                // look at the wait's state, then block again
            } catch (Throwable e) {
                wait.failed(e);
                return;
            }
        }
    }

    @Override
    public void release(PendingWait wait) {
        // the serving thread sees the wait done after its current slice
    }

    @Override
    public void shutdown() {
        threads.shutdownNow();
        try {
            threads.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
