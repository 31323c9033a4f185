package io.gpusync.reactor;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.CheapProbe;
import io.gpusync.spi.ReadableFdWaiter;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.util.concurrent.EventExecutor;

import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.RejectedExecutionException;

/**
 * {@link WaitPath#EPOLL}: the fds of {@link ReadableFdWaiter}s are added to the epoll set of a Netty 4.2
 * {@link IoEventLoop} (the engine's own, or a Reactor Netty server's), so no thread waits. An fd always goes
 * to the same loop ({@code fd mod loops}), and all waits on one fd on one loop — from every engine built on
 * that loop — share one {@link FdWatch}: Netty allows one registration per fd per loop.
 *
 * <p>A wait ends when its fd is readable (completed; for a {@link CheapProbe} waiter after one probe, whose error —
 * a D3D12 device removal, say — fails the wait instead), reports an error condition or hang-up without being
 * readable (failed at once with a {@link ErrorKind#FATAL} {@link SyncException}: the waiter's own error if
 * its probe has one), or when the loop shuts down ({@link SyncCancelledException}). Each watched fd costs one
 * more fd while watched (the watch's own duplicate), so that a user may close a borrowed fd as soon as its
 * wait has terminated — in {@code doOnError}, {@code doFinally} or after {@code cancel()} returns — without
 * the deregistration ever touching an unrelated file that reuses the number.
 *
 * <p>Thread-safe: {@link #start} and {@link #release} may run on any thread and never block; the fd
 * bookkeeping runs on the loop's thread (work from other threads is submitted to it as tasks).
 */
final class EpollFdWatcher implements WaitStrategy {
    private final LoopFdWatches[] loops;

    private EpollFdWatcher(LoopFdWatches[] loops) {
        this.loops = loops;
    }

    /** A watcher on the epoll loops of {@code group}, or {@code null} if the group does not run epoll. */
    static EpollFdWatcher on(IoEventLoopGroup group) {
        if (!group.isIoType(EpollIoHandler.class)) {
            return null;
        }
        List<LoopFdWatches> loops = new ArrayList<>();
        for (EventExecutor e : group) {
            if (e instanceof IoEventLoop loop && loop.isCompatible(FdWatch.class)) {
                loops.add(LoopFdWatches.of(loop));
            }
        }
        return loops.isEmpty() ? null : new EpollFdWatcher(loops.toArray(LoopFdWatches[]::new));
    }

    @Override
    public WaitPath path() {
        return WaitPath.EPOLL;
    }

    @Override
    public boolean accepts(SyncWaiter waiter) {
        return waiter instanceof ReadableFdWaiter;
    }

    @Override
    public void start(PendingWait wait) {
        ReadableFdWaiter.FdLease lease = ((ReadableFdWaiter) wait.waiter).leaseReadableFd();
        Member member = new Member(wait, lease, loops[Math.floorMod(lease.fd(), loops.length)]);
        if (!wait.attach(member)) {
            return; // terminated meanwhile: attach has released the member (its lease) already
        }
        try {
            member.watches.execute(member::join);
        } catch (RejectedExecutionException loopGone) {
            lease.close();
            wait.failed(new SyncCancelledException("the event loop for fd " + lease.fd() + " has shut down; "
                    + wait.waiter + " cannot be watched"));
        }
    }

    /**
     * One wait's membership of an fd watch, and the wait's {@link Registration}: its release leaves the watch on the
     * loop (epoll DEL when it was the last member). From another thread (a timeout, a cancel, a dispose) the leave
     * is queued to the loop and the outcome is delivered without waiting for it: the epoll set holds the watch's
     * own duplicate of the fd, never the user's number, so a subscriber that closes its fd in
     * {@code doOnError}/{@code doFinally} cannot make the DEL hit a file that reuses the number.
     */
    private static final class Member implements FdWatch.Listener, Registration {
        final PendingWait wait;
        final ReadableFdWaiter.FdLease lease;
        final LoopFdWatches watches;
        /** Loop thread only. */
        private FdWatch watch;
        /** Loop thread only. */
        private boolean left;

        Member(PendingWait wait, ReadableFdWaiter.FdLease lease, LoopFdWatches watches) {
            this.wait = wait;
            this.lease = lease;
            this.watches = watches;
        }

        /** On the loop. */
        void join() {
            if (left) {
                return;
            }
            if (wait.isDone()) {
                leaveOnLoop();
                return;
            }
            try {
                watch = watches.join(lease.fd(), this);
            } catch (Throwable t) {
                leaveOnLoop();
                wait.failed(t);
            }
        }

        @Override
        public void release() {
            leave();
        }

        /** Any thread. */
        void leave() {
            if (watches.inEventLoop()) {
                leaveOnLoop();
                return;
            }
            try {
                watches.execute(this::leaveOnLoop);
            } catch (RejectedExecutionException loopGone) {
                lease.close(); // the loop has closed its watches; only our hold on the waiter is left
            }
        }

        private void leaveOnLoop() {
            if (left) {
                return;
            }
            left = true;
            if (watch != null) {
                watch.remove(this);
            }
            lease.close();
        }

        @Override
        public void readable() {
            if (wait.waiter instanceof CheapProbe) {
                // readable says "reached or failed" for some fds (a D3D12 fence's eventfd is also written when the
                // device is removed and every fence jumps to UINT64_MAX): the probe, a few ns on the loop, turns a
                // failure into the waiter's own error instead of a completion
                try {
                    wait.waiter.isSignaled();
                } catch (Throwable t) {
                    wait.failed(t);
                    return;
                }
            }
            wait.signalled();
        }

        @Override
        public void errorCondition(int events) {
            boolean signalled;
            try { // the waiter's own probe may know better, and says it in its own words
                signalled = wait.waiter.isSignaled();
            } catch (Throwable t) {
                wait.failed(t);
                return;
            }
            if (signalled) {
                wait.signalled();
                return;
            }
            BackendKind backend = wait.waiter.backend() != null ? wait.waiter.backend() : BackendKind.LINUX;
            wait.failed(new SyncBackendException(ErrorKind.FATAL, backend, events, names(events),
                    "fd " + lease.fd() + " hung up or reported an error condition without becoming readable: "
                            + wait.waiter + " can never be signalled"));
        }

        @Override
        public void registrationFailed(Throwable cause) {
            wait.failed(new SyncException(ErrorKind.CONFIGURATION, BackendKind.LINUX,
                    "fd " + lease.fd() + " cannot be added to an epoll set (" + cause + ")", cause));
        }

        @Override
        public void loopClosed() {
            wait.failed(new SyncCancelledException("the event loop watching fd " + lease.fd()
                    + " shut down while waiting on " + wait.waiter));
        }

        private static String names(int events) {
            StringJoiner names = new StringJoiner("|");
            if ((events & EpollIoOps.EPOLLERR.value()) != 0) {
                names.add("EPOLLERR");
            }
            if ((events & FdWatch.EPOLLHUP) != 0) {
                names.add("EPOLLHUP");
            }
            if ((events & EpollIoOps.EPOLLRDHUP.value()) != 0) {
                names.add("EPOLLRDHUP");
            }
            return names.toString();
        }
    }
}
