package io.gpusync.linux;

import io.gpusync.BackendKind;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.libc.ErrnoCalls;
import io.gpusync.bindings.libc.Libc;
import io.gpusync.internal.NativeAccess;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.ValueLayout;

/**
 * A Linux eventfd: the fd you make yourself to signal the host from another thread or a native callback.
 * {@link #signal()} adds 1 to its counter and makes it readable; {@link #point()} is a
 * {@link SyncPoint.SyncFd} signalled from then on (until {@link #drain()} resets it).
 *
 * <p>Thread-safe; {@code signal} never blocks (non-blocking fd). The fd is closed once {@link #close()} has
 * been called and every point minted from it is closed or unreachable, never during a wait on it.
 */
public final class EventFd implements AutoCloseable {
    private final int fd;
    private final NativeAnchor anchor;
    private final NativeAnchor.Claim claim;

    private EventFd(int fd) {
        this.fd = fd;
        this.anchor = NativeAnchor.adopt("eventfd " + fd, () -> SyncFds.closeQuietly(fd));
        this.claim = anchor.claim(this);
    }

    /**
     * A new non-blocking, close-on-exec eventfd with counter 0.
     *
     * @throws io.gpusync.SyncNotSupportedException if the JVM denies gpusync native access (the message names
     *                                              the {@code --enable-native-access} flags)
     */
    public static EventFd create() {
        NativeAccess.require(BackendKind.LINUX, "eventfd");
        Errno.Scratch s = Errno.scratch();
        int fd = ErrnoCalls.eventfd(s.callState, 0, Libc.EFD_CLOEXEC() | Libc.EFD_NONBLOCK());
        if (fd < 0) {
            throw Errno.failure("eventfd", -1, ErrnoCalls.errno(s.callState));
        }
        return new EventFd(fd);
    }

    /** The fd number. */
    public int fd() {
        return fd;
    }

    /** Adds 1 to the counter: the fd becomes readable. Safe from any thread, never blocks. */
    public void signal() {
        claim.enter();
        try {
            Errno.Scratch s = Errno.scratch();
            s.word.set(ValueLayout.JAVA_LONG, 0, 1L);
            long n = ErrnoCalls.write(s.callState, fd, s.word, 8);
            if (n != 8 && ErrnoCalls.errno(s.callState) != Errno.EAGAIN) { // EAGAIN: counter saturated, still readable
                throw Errno.failure("write", fd, ErrnoCalls.errno(s.callState));
            }
        } finally {
            claim.exit();
        }
    }

    /** Reads and resets the counter; returns the value read, or 0 if it was not signalled. */
    public long drain() {
        claim.enter();
        try {
            Errno.Scratch s = Errno.scratch();
            long n = ErrnoCalls.read(s.callState, fd, s.word, 8);
            if (n == 8) {
                return s.word.get(ValueLayout.JAVA_LONG, 0);
            }
            int errno = ErrnoCalls.errno(s.callState);
            if (errno == Errno.EAGAIN) {
                return 0;
            }
            throw Errno.failure("read", fd, errno);
        } finally {
            claim.exit();
        }
    }

    /** A point signalled while the counter is non-zero; it keeps the fd open while in use. */
    public SyncPoint point() {
        return new SyncPoint.SyncFd(fd, new SyncFdWaiter(fd, anchor));
    }

    /** Drops this object's claim on the fd (closed once no point uses it). Idempotent. */
    @Override
    public void close() {
        claim.close();
    }

    @Override
    public String toString() {
        return "EventFd[" + fd + "]";
    }
}
