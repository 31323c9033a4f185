package io.gpusync.reactor;

import io.gpusync.SyncNotSupportedException;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * An engine's Netty 4.2 epoll event loops: its own, or a user's (e.g. a Reactor Netty server's). The only
 * class besides the {@link WaitPath#EPOLL} machinery that names Netty types; loaded only once
 * {@link NettyPresence} has found Netty 4.2 with the epoll transport, so that everything else runs with no
 * Netty (or Netty 4.1) on the class path.
 */
final class NettyLoops implements EngineLoops {
    private final IoEventLoopGroup group;
    /** Whether the engine created the loops (and so shuts them down). */
    private final boolean owned;
    private final EpollFdWatcher fdWatcher;

    private NettyLoops(IoEventLoopGroup group, boolean owned) {
        this.group = group;
        this.owned = owned;
        this.fdWatcher = EpollFdWatcher.on(group);
    }

    /** Whether native epoll works here (the native library for this OS and architecture loaded). */
    static boolean epollAvailable() {
        return Epoll.isAvailable();
    }

    /** Why native epoll does not work here, or {@code null}. */
    static Throwable epollUnavailabilityCause() {
        return Epoll.unavailabilityCause();
    }

    /** The engine's own epoll loops; {@link #epollAvailable()} must hold. */
    static EngineLoops own(int threads, ThreadFactory threadFactory) {
        return new NettyLoops(new MultiThreadIoEventLoopGroup(threads, threadFactory, EpollIoHandler.newFactory()),
                true);
    }

    /** A user's loops, checked by {@link #requireEpollGroup} (never shut down by the engine). */
    static EngineLoops shared(Object group) {
        return new NettyLoops((IoEventLoopGroup) group, false);
    }

    /**
     * Checks that {@code group} is a Netty 4.2 {@link IoEventLoopGroup} running {@link EpollIoHandler}.
     *
     * @throws SyncNotSupportedException if it is not, saying why and how to get one
     */
    static void requireEpollGroup(EventLoopGroup group) {
        if (!(group instanceof IoEventLoopGroup io)) {
            throw new SyncNotSupportedException(null, "gpusync shares only Netty 4.2 IoEventLoopGroups running"
                    + " epoll, not " + group.getClass().getName() + ". " + NettyPresence.EPOLL_HOW_TO);
        }
        if (!io.isIoType(EpollIoHandler.class)) {
            Throwable cause = Epoll.isAvailable() ? null : Epoll.unavailabilityCause();
            throw new SyncNotSupportedException(null, "gpusync shares only event loops that run epoll"
                    + " (EpollIoHandler); " + group.getClass().getSimpleName() + " does not"
                    + (cause != null ? ", and native epoll is unavailable here (" + cause + ")" : "")
                    + ". " + NettyPresence.EPOLL_HOW_TO, cause);
        }
    }

    @Override
    public void execute(Runnable task) {
        group.execute(task);
    }

    @Override
    public WaitStrategy fdWatcher() {
        return fdWatcher;
    }

    /** Starts shutting the engine's own loops down (no quiet period) and returns; a user's are left alone. */
    @Override
    public void shutdown() {
        if (owned) {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        }
    }

    @Override
    public String toString() {
        return "NettyLoops[" + group + (owned ? ", owned" : ", shared") + "]";
    }
}
