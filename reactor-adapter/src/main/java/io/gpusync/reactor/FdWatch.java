package io.gpusync.reactor;

import io.gpusync.bindings.libc.Libc;
import io.gpusync.linux.SyncFds;
import io.netty.channel.IoEvent;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoEvent;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.FileDescriptor;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The epoll registration of one fd on one loop, shared by every wait on that fd from every engine on the loop
 * (see {@link LoopFdWatches}).
 *
 * <p>It registers its own duplicate of the fd ({@link SyncFds#duplicate}), which it closes after Netty has
 * taken it out of the epoll set. So {@code epoll_ctl(DEL)} never names a number that the user may have
 * closed — a borrowed fd may be closed as soon as its wait has terminated, before the loop has got round to
 * deregistering — and reused for an unrelated socket; and the user's fd is never closed through Netty.
 *
 * <p>The registration is level-triggered {@code EPOLLIN}. Whatever the loop reports ends the watch at once:
 * it leaves the epoll set first, then tells every listener — readable means signalled; an error condition or
 * a hang-up ({@code EPOLLERR}, {@code EPOLLHUP}, {@code EPOLLRDHUP}) without readability is final (a pipe
 * whose writer closed never becomes readable, and level-triggered it would wake the loop forever). A listener
 * that throws harms neither the other listeners nor the loop: its exception goes to
 * {@link Operators#onErrorDropped}.
 *
 * <p>Confined to the loop's thread, like every Netty handle.
 */
final class FdWatch implements EpollIoHandle {
    private static final int READABLE = EpollIoOps.EPOLLIN.value();
    static final int EPOLLHUP = Libc.EPOLLHUP(); // not among Netty's EpollIoOps
    private static final int ERROR_CONDITION = EpollIoOps.EPOLLERR.value() | EPOLLHUP | EpollIoOps.EPOLLRDHUP.value();

    /** One wait's interest in the fd; called on the loop's thread, after the watch has left the epoll set. */
    interface Listener {
        /** The fd is readable: the point is signalled. */
        void readable();

        /** The fd reported an error condition or hang-up without being readable ({@code events}: epoll bits). */
        void errorCondition(int events);

        /** Netty refused the registration. */
        void registrationFailed(Throwable cause);

        /** The loop is shutting down and closes its handles. */
        void loopClosed();
    }

    private final LoopFdWatches watches;
    private final int fd;
    private final FileDescriptor copy;
    private final List<Listener> listeners = new ArrayList<>(1);
    private IoRegistration registration;
    private boolean closed;

    private FdWatch(LoopFdWatches watches, int fd, int copy) {
        this.watches = watches;
        this.fd = fd;
        this.copy = new FileDescriptor(copy);
    }

    /**
     * A watch of {@code fd}, not yet registered; loop thread only.
     *
     * @throws io.gpusync.SyncException if {@code fd} cannot be duplicated
     */
    static FdWatch open(LoopFdWatches watches, int fd) {
        return new FdWatch(watches, fd, SyncFds.duplicate(fd));
    }

    /** Adds the copy to the loop's epoll set; a failure reaches the listeners (at once, on the loop). */
    void register() {
        io.netty.util.concurrent.Future<IoRegistration> registering;
        try {
            registering = watches.loop.register(this);
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            endThen(l -> l.registrationFailed(t));
            return;
        }
        registering.addListener(f -> {
            if (!f.isSuccess()) {
                endThen(l -> l.registrationFailed(f.cause()));
                return;
            }
            IoRegistration r = (IoRegistration) f.getNow();
            if (closed) {
                r.cancel();
                return;
            }
            registration = r;
            try {
                r.submit(EpollIoOps.EPOLLIN);
            } catch (Throwable t) {
                Exceptions.throwIfJvmFatal(t);
                endThen(l -> l.registrationFailed(t));
            }
        });
    }

    void add(Listener listener) {
        listeners.add(listener);
    }

    /** Removes {@code listener}; the last one out takes the fd out of the epoll set. */
    void remove(Listener listener) {
        listeners.remove(listener);
        if (listeners.isEmpty()) {
            deregister();
        }
    }

    @Override
    public FileDescriptor fd() {
        return copy;
    }

    @Override
    public void handle(IoRegistration reg, IoEvent event) {
        if (closed || !(event instanceof EpollIoEvent e)) {
            return;
        }
        int events = e.ops().value();
        if ((events & READABLE) != 0) {
            endThen(Listener::readable);
        } else if ((events & ERROR_CONDITION) != 0) {
            endThen(l -> l.errorCondition(events));
        }
    }

    /** Netty has taken our copy out of the epoll set: only now may its number be freed. */
    @Override
    public void unregistered() {
        closeCopy();
    }

    /** Netty closes the handles of a loop that shuts down. */
    @Override
    public void close() {
        if (!closed) {
            endThen(Listener::loopClosed);
        }
        closeCopy(); // normally done by unregistered() already
    }

    /**
     * The loop has terminated without closing this handle (Netty skips its handles when the shutdown is
     * requested while the loop runs tasks): its epoll set is gone. Runs on the thread that completes the
     * loop's termination, after the loop's thread has finished.
     */
    void loopTerminated() {
        registration = null; // nothing to cancel, and no loop left to run a cancel
        close();
    }

    private void endThen(Consumer<Listener> tell) {
        List<Listener> told = List.copyOf(listeners);
        deregister();
        for (Listener l : told) {
            try {
                tell.accept(l);
            } catch (Throwable t) {
                Exceptions.throwIfJvmFatal(t);
                Operators.onErrorDropped(t, Context.empty()); // never into Netty: it would sleep the loop 1 s
            }
        }
    }

    private void deregister() {
        if (closed) {
            return;
        }
        closed = true;
        watches.forget(fd, this);
        IoRegistration r = registration;
        if (r != null) {
            r.cancel(); // on the loop: epoll_ctl(DEL) now, then unregistered()
        } else {
            closeCopy(); // never reached the epoll set (a pending registration is cancelled when it completes)
        }
    }

    private void closeCopy() {
        try {
            copy.close();
        } catch (IOException ignored) {
            // closed already, or EBADF: nothing else holds our number
        }
    }

    @Override
    public String toString() {
        return "FdWatch[fd " + fd + " as " + copy.intValue() + ", " + listeners.size() + " waits"
                + (closed ? ", closed" : "") + "]";
    }
}
