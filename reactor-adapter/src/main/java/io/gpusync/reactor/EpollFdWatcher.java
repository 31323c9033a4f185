package io.gpusync.reactor;

import io.gpusync.SyncWaiter;
import io.gpusync.spi.ReadableFdWaiter;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoEvent;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.concurrent.EventExecutor;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link WaitPath#EPOLL}: the fds of {@link ReadableFdWaiter}s are added to the epoll set of a Netty 4.2
 * {@link IoEventLoop} (the engine's own, or a Reactor Netty server's), so no thread waits. An fd always goes
 * to the same loop ({@code fd mod loops}), and all waits on one fd share one registration — Netty allows
 * one registration per fd per loop (a second silently steals the events). All bookkeeping happens on the
 * loop's thread; registrations and cancels from other threads are submitted to it as tasks.
 */
final class EpollFdWatcher implements WaitStrategy {
    private final IoEventLoop[] loops;
    private final Map<IoEventLoop, Map<Integer, FdWatch>> watches = new HashMap<>();

    private EpollFdWatcher(IoEventLoop[] loops) {
        this.loops = loops;
        for (IoEventLoop loop : loops) {
            watches.put(loop, new HashMap<>());
        }
    }

    /** A watcher on the epoll loops of {@code group}, or {@code null} if the group does not run epoll. */
    static EpollFdWatcher on(IoEventLoopGroup group) {
        if (!group.isIoType(EpollIoHandler.class)) {
            return null;
        }
        List<IoEventLoop> loops = new ArrayList<>();
        for (EventExecutor e : group) {
            if (e instanceof IoEventLoop loop && loop.isCompatible(FdWatch.class)) {
                loops.add(loop);
            }
        }
        return loops.isEmpty() ? null : new EpollFdWatcher(loops.toArray(IoEventLoop[]::new));
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
        int fd = lease.fd();
        IoEventLoop loop = loops[Math.floorMod(fd, loops.length)];
        Member member = new Member(wait, lease, loop);
        wait.registration = member;
        loop.execute(() -> member.join(watches.get(loop)));
    }

    @Override
    public void release(PendingWait wait) {
        if (wait.registration instanceof Member member) {
            if (member.loop.inEventLoop()) {
                member.leave();
            } else {
                member.loop.execute(member::leave);
            }
        }
    }

    /** One wait's membership of an fd watch; touched only on its loop. */
    private static final class Member {
        final PendingWait wait;
        final ReadableFdWaiter.FdLease lease;
        final IoEventLoop loop;
        FdWatch watch;
        boolean left;

        Member(PendingWait wait, ReadableFdWaiter.FdLease lease, IoEventLoop loop) {
            this.wait = wait;
            this.lease = lease;
            this.loop = loop;
        }

        void join(Map<Integer, FdWatch> byFd) {
            if (left || wait.isDone()) {
                leave();
                return;
            }
            watch = byFd.get(lease.fd());
            boolean fresh = watch == null;
            if (fresh) {
                watch = new FdWatch(lease.fd(), loop, byFd);
                byFd.put(lease.fd(), watch);
            }
            watch.add(this);
            if (fresh) {
                watch.register();
            }
        }

        void leave() {
            if (left) {
                return;
            }
            left = true;
            if (watch != null) {
                watch.remove(this);
            }
            lease.close();
        }
    }

    /** The epoll registration of one fd on one loop, shared by every wait on that fd. */
    private static final class FdWatch implements EpollIoHandle {
        private final int fd;
        private final FileDescriptor descriptor;
        private final IoEventLoop loop;
        private final Map<Integer, FdWatch> byFd;
        private final List<Member> members = new ArrayList<>(1);
        private IoRegistration registration;
        private boolean closed;

        FdWatch(int fd, IoEventLoop loop, Map<Integer, FdWatch> byFd) {
            this.fd = fd;
            this.descriptor = new FileDescriptor(fd); // never closed through Netty: the waiter owns the fd
            this.loop = loop;
            this.byFd = byFd;
        }

        void register() {
            loop.register(this).addListener(f -> {
                if (!f.isSuccess()) {
                    fail(f.cause());
                    return;
                }
                IoRegistration r = (IoRegistration) f.getNow();
                if (closed) {
                    r.cancel();
                } else {
                    registration = r;
                    r.submit(EpollIoOps.EPOLLIN);
                }
            });
        }

        void add(Member m) {
            members.add(m);
        }

        void remove(Member m) {
            members.remove(m);
            if (members.isEmpty()) {
                close();
            }
        }

        private void fail(Throwable cause) {
            for (Member m : List.copyOf(members)) {
                m.wait.failed(cause);
            }
            close();
        }

        @Override
        public FileDescriptor fd() {
            return descriptor;
        }

        @Override
        public void handle(IoRegistration reg, IoEvent event) {
            if (closed || !(event instanceof EpollIoEvent e)) {
                return; // may still run once after a cancel
            }
            EpollIoOps ops = e.ops();
            if (ops.contains(EpollIoOps.EPOLLIN)) {
                for (Member m : List.copyOf(members)) {
                    m.wait.signalled(); // readable = signalled
                }
            } else if (ops.contains(EpollIoOps.EPOLLERR)) {
                for (Member m : List.copyOf(members)) {
                    try { // let the waiter say what the error condition means
                        if (m.wait.waiter.isSignaled()) {
                            m.wait.signalled();
                        }
                    } catch (Throwable t) {
                        m.wait.failed(t);
                    }
                }
            }
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            byFd.remove(fd, this);
            if (registration != null) {
                registration.cancel();
            }
        }
    }
}
