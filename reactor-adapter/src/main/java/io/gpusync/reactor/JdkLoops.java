package io.gpusync.reactor;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The engine's hand-off threads when Netty 4.2 with native epoll is not on the class path: a fixed pool of
 * {@code eventLoopThreads} daemon threads (started on first use, stopped after 30 s idle) that takes driver
 * callbacks off the driver's thread. Watches no fds: fd waits then take {@link WaitPath#BLOCKING}.
 */
final class JdkLoops implements EngineLoops {
    private static final ThreadLocal<JdkLoops> CURRENT = new ThreadLocal<>();

    private final ThreadPoolExecutor executor;

    JdkLoops(int threads, ThreadFactory threadFactory) {
        this.executor = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> threadFactory.newThread(() -> {
                    CURRENT.set(this);
                    r.run();
                }));
        executor.allowCoreThreadTimeOut(true);
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
        if (CURRENT.get() == this) {
            return;
        }
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "JdkLoops[" + executor.getMaximumPoolSize() + " threads]";
    }
}
