package io.gpusync.linux;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.libc.ErrnoCalls;
import io.gpusync.internal.NativeAccess;
import io.gpusync.kit.NativeAnchor;

/**
 * Mints {@link SyncPoint.SyncFd} points from raw Linux file descriptors that become readable when
 * signalled (an eventfd, a sync_file, a pipe's read end). Stateless and thread-safe; nothing here blocks.
 *
 * <p>Waiting on such a point blocks in {@code poll(2)} ({@link SyncPoint#await}), or costs no thread
 * through the reactor adapter, which adds the fd to a Netty epoll loop. A wait fails, rather than waits on,
 * when the fd reports an error condition or a hang-up without being readable (a pipe whose writer closed).
 *
 * <p><b>Ownership.</b> {@link #borrow} leaves the fd with the caller, who keeps it open while the point is
 * in use. {@link #adopt} hands it over: the point closes it, once. {@link #duplicate} makes an fd that the
 * caller owns on the same open file, so {@code adopt(duplicate(fd))} gives a point whose lifetime is
 * independent of the caller's own fd.
 *
 * <p>Each method fails with a {@link io.gpusync.SyncNotSupportedException} ({@link io.gpusync.ErrorKind#CONFIGURATION})
 * naming the {@code --enable-native-access} flags if the JVM denies gpusync native access.
 */
public final class SyncFds {
    private SyncFds() {
    }

    /**
     * A point over {@code fd}, which the caller keeps open while the point is in use and closes itself.
     * The number is not checked here: a wait on a number that is not open fails with
     * {@link SyncInvalidArgumentException} ({@code EBADF}).
     *
     * @throws SyncInvalidArgumentException if {@code fd} is negative
     */
    public static SyncPoint borrow(int fd) {
        requireNonNegative(fd);
        NativeAccess.require(BackendKind.LINUX, "fd " + fd);
        return new SyncPoint.SyncFd(fd, new SyncFdWaiter(fd, NativeAnchor.borrow(SyncFds.class, "fd " + fd)));
    }

    /**
     * A point that takes ownership of {@code fd}: it is closed once the point's waiter is closed (or
     * unreachable) and no wait on it is in progress. From this call on the caller must not close the fd,
     * nor adopt it again, nor use it after the point is closed: the number is closed exactly once, by the
     * point, and would otherwise close whatever file later reuses the number.
     *
     * @throws SyncInvalidArgumentException if {@code fd} is not an open file descriptor of this process
     *                                      (checked with {@code fcntl(F_GETFD)}; nothing is then owned)
     */
    public static SyncPoint adopt(int fd) {
        requireNonNegative(fd);
        NativeAccess.require(BackendKind.LINUX, "fd " + fd);
        Fcntl.requireOpen(fd);
        return new SyncPoint.SyncFd(fd, new SyncFdWaiter(fd, NativeAnchor.adopt("fd " + fd,
                () -> closeQuietly(fd))));
    }

    /**
     * A new file descriptor on the same open file as {@code fd} ({@code fcntl(F_DUPFD_CLOEXEC)}), owned by
     * the caller: closing one of the two leaves the other usable. The open file stays open while either is.
     *
     * @throws SyncInvalidArgumentException if {@code fd} is not an open file descriptor
     * @throws io.gpusync.SyncBackendException if the process is out of file descriptors ({@code EMFILE},
     *                                         {@link io.gpusync.ErrorKind#RECOVERABLE})
     */
    public static int duplicate(int fd) {
        requireNonNegative(fd);
        NativeAccess.require(BackendKind.LINUX, "fd " + fd);
        return Fcntl.duplicate(fd);
    }

    static void closeQuietly(int fd) {
        ErrnoCalls.close(Errno.scratch().callState, fd);
    }

    private static void requireNonNegative(int fd) {
        if (fd < 0) {
            throw new SyncInvalidArgumentException(BackendKind.LINUX, "not a file descriptor: " + fd);
        }
    }
}
