package io.gpusync.linux;

import io.gpusync.SyncPoint;
import io.gpusync.bindings.libc.ErrnoCalls;

/**
 * Mints {@link SyncPoint.SyncFd} points from raw Linux file descriptors that become readable when
 * signalled (an eventfd, a sync_file, a pipe's read end). Stateless and thread-safe.
 *
 * <p>Waiting on such a point blocks in {@code poll(2)} ({@link SyncPoint#await}), or costs no thread
 * through the reactor adapter, which adds the fd to a Netty epoll loop.
 */
public final class SyncFds {
    private SyncFds() {
    }

    /** A point over {@code fd}, which the caller keeps open while the point is in use and closes itself. */
    public static SyncPoint borrow(int fd) {
        requireFd(fd);
        return new SyncPoint.SyncFd(fd, new SyncFdWaiter(fd, io.gpusync.spi.NativeAnchor.borrowed("fd " + fd)));
    }

    /**
     * A point that takes ownership of {@code fd}: it is closed once the point's waiter is closed (or
     * unreachable) and no wait on it is in progress.
     */
    public static SyncPoint adopt(int fd) {
        requireFd(fd);
        return new SyncPoint.SyncFd(fd, new SyncFdWaiter(fd, io.gpusync.spi.NativeAnchor.owned("fd " + fd,
                () -> closeQuietly(fd))));
    }

    static void closeQuietly(int fd) {
        ErrnoCalls.close(Errno.scratch().callState, fd);
    }

    private static void requireFd(int fd) {
        if (fd < 0) {
            throw new io.gpusync.SyncInvalidArgumentException(io.gpusync.BackendKind.LINUX, "not a file descriptor: " + fd);
        }
    }
}
