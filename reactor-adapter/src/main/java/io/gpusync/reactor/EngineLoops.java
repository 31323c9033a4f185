package io.gpusync.reactor;

import java.util.concurrent.Executor;

/**
 * The threads an engine hands driver callbacks to ({@link WaitPath#CALLBACK}) and, with Netty 4.2 epoll,
 * watches fds on ({@link WaitPath#EPOLL}): {@link NettyLoops} (the engine's own epoll loops, or a user's),
 * or {@link JdkLoops} when Netty 4.2 with native epoll is not there. {@link #execute} throws
 * {@link java.util.concurrent.RejectedExecutionException} once the loops have shut down. Thread-safe.
 */
interface EngineLoops extends Executor {

    /** The {@link WaitPath#EPOLL} strategy on these loops, or {@code null} if they cannot watch fds. */
    WaitStrategy fdWatcher();

    /**
     * Starts stopping the loops if the engine created them (never a user's) and returns without waiting: tasks
     * already handed over still run; the engine's {@link EngineThreads} tells when the threads have ended.
     */
    void shutdown();
}
