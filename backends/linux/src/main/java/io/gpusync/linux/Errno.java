package io.gpusync.linux;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.bindings.libc.ErrnoCalls;
import io.gpusync.bindings.libc.Libc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

/** errno values, their names, and the exception each becomes. */
final class Errno {
    static final int EINTR = Libc.EINTR();
    static final int EAGAIN = Libc.EAGAIN();
    static final int EBADF = Libc.EBADF();

    private static final Map<Integer, String> NAMES = Map.of(
            Libc.EINTR(), "EINTR", Libc.EAGAIN(), "EAGAIN", Libc.EBADF(), "EBADF", Libc.EINVAL(), "EINVAL",
            Libc.ENOMEM(), "ENOMEM", Libc.EFAULT(), "EFAULT", Libc.EMFILE(), "EMFILE", Libc.ENFILE(), "ENFILE");

    /** Per-thread scratch: a pollfd, an 8-byte buffer and the errno capture state. */
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private Errno() {
    }

    static Scratch scratch() {
        return SCRATCH.get();
    }

    static String name(int errno) {
        return NAMES.getOrDefault(errno, "errno " + errno);
    }

    static SyncException failure(String call, int fd, int errno) {
        String what = call + " on fd " + fd;
        if (errno == Libc.EBADF() || errno == Libc.EINVAL()) {
            return new SyncInvalidArgumentException(BackendKind.LINUX, what + " failed: " + name(errno)
                    + " (not an open fd of the right kind?)");
        }
        ErrorKind kind = errno == Libc.ENOMEM() || errno == Libc.EMFILE() || errno == Libc.ENFILE()
                ? ErrorKind.RECOVERABLE : ErrorKind.FATAL;
        return new SyncBackendException(kind, BackendKind.LINUX, errno, name(errno), what + " failed");
    }

    static final class Scratch {
        final MemorySegment pollfd;
        final MemorySegment word;
        final MemorySegment callState;

        Scratch() {
            Arena arena = Arena.ofAuto();
            pollfd = arena.allocate(io.gpusync.bindings.libc.pollfd.layout());
            word = arena.allocate(8, 8);
            callState = ErrnoCalls.allocateCallState(arena);
        }
    }
}
