package io.gpusync.linux;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.bindings.libc.ErrnoCalls;
import io.gpusync.bindings.libc.Libc;
import io.gpusync.bindings.libc.pollfd;

/**
 * One {@code poll(2)} on one fd for readability: the slice of a {@link io.gpusync.kit.WaitLoop} wait. The loop
 * owns deadlines, re-waits and the interrupt rule; a slice only says whether the fd is readable now.
 */
final class FdPoll {
    private static final short POLLIN = (short) Libc.POLLIN();
    private static final short POLLNVAL = (short) Libc.POLLNVAL();
    private static final short POLLERR = (short) Libc.POLLERR();

    private FdPoll() {
    }

    /**
     * The {@code poll} timeout for a slice of {@code nanos}: {@code 0} probes, {@link Long#MAX_VALUE} is
     * infinite ({@code -1}), anything else is rounded up to whole milliseconds (never a 0 that would spin)
     * and capped at {@link Integer#MAX_VALUE} ms (≈ 24.8 days), never "forever".
     */
    static int sliceMillis(long nanos) {
        if (nanos <= 0) {
            return 0;
        }
        if (nanos == Long.MAX_VALUE) {
            return -1;
        }
        long ms = nanos / 1_000_000L + (nanos % 1_000_000L == 0 ? 0 : 1);
        return (int) Math.min(ms, Integer.MAX_VALUE);
    }

    /**
     * Whether {@code fd} is readable within one slice of {@code nanos} (0 probes). Returns {@code false} early
     * when a signal interrupts {@code poll} (EINTR): the caller's loop waits again for the time left.
     *
     * @throws io.gpusync.SyncException on a poll error, an invalid fd (POLLNVAL), an error condition
     *                                  (POLLERR) or a hang-up without data (POLLHUP): never folded into
     *                                  {@code false}
     */
    static boolean readable(int fd, long nanos) {
        Errno.Scratch s = Errno.scratch();
        pollfd.fd(s.pollfd, fd);
        pollfd.events(s.pollfd, POLLIN);
        pollfd.revents(s.pollfd, (short) 0);
        int n = ErrnoCalls.poll(s.callState, s.pollfd, 1, sliceMillis(nanos));
        if (n < 0) {
            int errno = ErrnoCalls.errno(s.callState);
            if (errno == Errno.EINTR) {
                return false;
            }
            throw Errno.failure("poll", fd, errno);
        }
        if (n == 0) {
            return false;
        }
        short revents = pollfd.revents(s.pollfd);
        if ((revents & POLLNVAL) != 0) {
            throw Errno.failure("poll", fd, Errno.EBADF);
        }
        if ((revents & POLLIN) != 0) {
            return true;
        }
        if ((revents & POLLERR) != 0) {
            throw new SyncBackendException(ErrorKind.FATAL, BackendKind.LINUX, revents, "POLLERR",
                    "poll on fd " + fd + " reported an error condition");
        }
        // POLLHUP without POLLIN: the writer is gone and nothing will ever be readable
        throw new SyncBackendException(ErrorKind.FATAL, BackendKind.LINUX, revents, "POLLHUP",
                "fd " + fd + " hung up without becoming readable");
    }
}
