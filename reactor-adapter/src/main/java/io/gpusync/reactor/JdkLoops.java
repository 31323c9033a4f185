package io.gpusync.reactor;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The engine's hand-off threads when Netty 4.2 with native epoll is not on the class path: a fixed pool of
 * {@code eventLoopThreads} daemon threads (started on first use, like event loops kept until the engine is
 * disposed) that takes driver callbacks off the driver's thread. Watches no fds: fd waits then take
 * {@link WaitPath#BLOCKING}.
 */
final class JdkLoops implements EngineLoops {
    private final LoopThreads threads;
    private final ThreadPoolExecutor executor;

    JdkLoops(int threads, ThreadFactory threadFactory) {
        this.threads = new LoopThreads(threadFactory);
        this.executor = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                this.threads);
    }

    @Override
    public void execute(Runnable task) {
        executor.execute(task);
    }

    @Override
    public WaitStrategy fdWatcher() {
        return null;
    }

    @Override
    public void shutdown() {
        executor.shutdown(); // hand-offs already queued still run: they deliver outcomes
        if (threads.isCurrent()) {
            return; // called from one of them: it stops once the calling code returns
        }
        threads.join(System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
    }

    @Override
    public String toString() {
        return "JdkLoops[" + executor.getMaximumPoolSize() + " threads]";
    }
}
