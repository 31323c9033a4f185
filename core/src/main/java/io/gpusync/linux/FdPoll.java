package io.gpusync.linux;

import io.gpusync.bindings.libc.ErrnoCalls;
import io.gpusync.bindings.libc.Libc;
import io.gpusync.bindings.libc.pollfd;
import io.gpusync.spi.Deadline;
import io.gpusync.spi.Timeouts;

import java.time.Duration;

/** {@code poll(2)} on one fd for readability, EINTR-safe and deadline-correct. */
final class FdPoll {
    private static final short POLLIN = (short) Libc.POLLIN();
    private static final short POLLNVAL = (short) Libc.POLLNVAL();
    private static final short POLLERR = (short) Libc.POLLERR();

    private FdPoll() {
    }

    /**
     * The {@code poll} timeout for the time left: {@code -1} (infinite) only for a deadline that never
     * passes; a finite wait beyond {@code poll}'s range ({@link Integer#MAX_VALUE} ms, ≈ 24.8 days) waits in
     * slices of that length, never "forever".
     */
    static int sliceMillis(Deadline deadline) {
        if (deadline.isForever()) {
            return -1;
        }
        return (int) Timeouts.toMillisCeil(Duration.ofNanos(deadline.remainingNanos()), Integer.MAX_VALUE,
                Integer.MAX_VALUE);
    }

    /**
     * Whether {@code fd} became readable within {@code timeout} (ZERO = probe, FOREVER = infinite).
     *
     * @throws io.gpusync.SyncException on a poll error, an invalid fd (POLLNVAL) or an error condition
     */
    static boolean readable(int fd, Duration timeout) {
        Errno.Scratch s = Errno.scratch();
        Deadline deadline = Deadline.after(timeout);
        while (true) {
            int ms = sliceMillis(deadline);
            pollfd.fd(s.pollfd, fd);
            pollfd.events(s.pollfd, POLLIN);
            pollfd.revents(s.pollfd, (short) 0);
            int n = ErrnoCalls.poll(s.callState, s.pollfd, 1, ms);
            if (n < 0) {
                int errno = ErrnoCalls.errno(s.callState);
                if (errno == Errno.EINTR) {
                    continue; // a signal interrupted the wait: wait again for the time left
                }
                throw Errno.failure("poll", fd, errno);
            }
            if (n == 0) {
                if (deadline.hasPassed()) {
                    return false;
                }
                continue; // woke early (ms rounding) or one slice of a long wait ended: wait out the rest
            }
            short revents = pollfd.revents(s.pollfd);
            if ((revents & POLLNVAL) != 0) {
                throw Errno.failure("poll", fd, Errno.EBADF);
            }
            if ((revents & POLLIN) != 0) {
                return true;
            }
            if ((revents & POLLERR) != 0) {
                throw new io.gpusync.SyncBackendException(io.gpusync.ErrorKind.FATAL, io.gpusync.BackendKind.LINUX,
                        revents, "POLLERR", "poll on fd " + fd + " reported an error condition");
            }
            // POLLHUP without POLLIN: the writer is gone and nothing will ever be readable
            throw new io.gpusync.SyncBackendException(io.gpusync.ErrorKind.FATAL, io.gpusync.BackendKind.LINUX,
                    revents, "POLLHUP", "fd " + fd + " hung up without becoming readable");
        }
    }
}
