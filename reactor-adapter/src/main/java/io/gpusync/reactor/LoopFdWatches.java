package io.gpusync.reactor;

import io.gpusync.internal.ProcessServices;
import io.netty.channel.IoEventLoop;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link FdWatch}es of one epoll {@link IoEventLoop}, shared by every engine whose waits run on that loop:
 * Netty keeps one registration per fd per loop (a second silently takes the first's events), so two engines
 * built on one group must not each register the same fd. One instance per loop, for the loop's lifetime.
 *
 * <p>{@link #of} is thread-safe; everything else runs on the loop's thread ({@link #execute} gets there), or
 * once the loop has terminated, on the thread that reports its termination.
 */
final class LoopFdWatches {

    final IoEventLoop loop;
    /** By the watched fd's number (the user's, not the watch's own duplicate); loop thread only. */
    private final Map<Integer, FdWatch> byFd = new HashMap<>();

    private LoopFdWatches(IoEventLoop loop) {
        this.loop = loop;
    }

    /** The watches of {@code loop}; forgotten once the loop terminates. */
    static LoopFdWatches of(IoEventLoop loop) {
        return ProcessServices.get().service(ByLoop.class, ByLoop::new).of(loop);
    }

    /**
     * The watches of every epoll loop in the process that an engine has used (loops are shared across engines, so
     * this is per process, held by {@link ProcessServices}). Thread-safe; a loop's entry goes when it terminates.
     */
    static final class ByLoop {
        private final ConcurrentHashMap<IoEventLoop, LoopFdWatches> byLoop = new ConcurrentHashMap<>();

        LoopFdWatches of(IoEventLoop loop) {
            LoopFdWatches known = byLoop.get(loop);
            if (known != null) {
                return known;
            }
            LoopFdWatches created = new LoopFdWatches(loop);
            known = byLoop.putIfAbsent(loop, created);
            if (known != null) {
                return known;
            }
            loop.terminationFuture().addListener(f -> {
                byLoop.remove(loop, created);
                created.loopTerminated();
            });
            return created;
        }
    }

    /** Ends the watches that the loop did not close as it shut down; after the loop's thread has finished. */
    private void loopTerminated() {
        for (FdWatch watch : List.copyOf(byFd.values())) {
            watch.loopTerminated();
        }
    }

    boolean inEventLoop() {
        return loop.inEventLoop();
    }

    /**
     * Runs {@code task} on the loop's thread, after every task submitted before it.
     *
     * @throws java.util.concurrent.RejectedExecutionException if the loop has shut down
     */
    void execute(Runnable task) {
        loop.execute(task);
    }

    /**
     * Adds {@code listener} to the watch of {@code fd}, making and registering the watch if there is none.
     * Loop thread only. A registration that fails at once reaches the listener before this returns.
     *
     * @return the watch, for {@link FdWatch#remove}
     * @throws io.gpusync.SyncException if the fd cannot be duplicated (not open, or out of fds)
     */
    FdWatch join(int fd, FdWatch.Listener listener) {
        FdWatch watch = byFd.get(fd);
        if (watch != null) {
            watch.add(listener);
            return watch;
        }
        watch = FdWatch.open(this, fd);
        byFd.put(fd, watch);
        watch.add(listener);
        watch.register();
        return watch;
    }

    /** Forgets {@code watch} (it is deregistering); loop thread only. */
    void forget(int fd, FdWatch watch) {
        byFd.remove(fd, watch);
    }

    @Override
    public String toString() {
        return "LoopFdWatches[" + loop + ", " + byFd.size() + " fds]";
    }
}
