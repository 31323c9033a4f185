package io.gpusync.linux;

import io.gpusync.bindings.libc.ErrnoCalls;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * {@code fcntl(2)}, which the generated libc bindings lack: a hand-written, errno-capturing downcall (the
 * call-state segment is {@link ErrnoCalls}'s, so {@link ErrnoCalls#errno} reads it). Stateless.
 */
final class Fcntl {
    /** {@code F_GETFD}: the fd flags; fails with {@code EBADF} when the number is not an open fd. */
    static final int F_GETFD = 1;
    /** {@code F_DUPFD_CLOEXEC}: a new fd ≥ the argument on the same open file, close-on-exec. */
    static final int F_DUPFD_CLOEXEC = 1030;

    // int fcntl(int fd, int cmd, ...): one variadic int
    private static final MethodHandle FCNTL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("fcntl")
                    .orElseThrow(() -> new UnsatisfiedLinkError("libc symbol not found: fcntl")),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2), Linker.Option.captureCallState("errno"));

    private Fcntl() {
    }

    /** {@code fcntl(fd, cmd, arg)}: the result, or -1 with errno in {@code callState}. */
    static int fcntl(MemorySegment callState, int fd, int cmd, int arg) {
        try {
            return (int) FCNTL.invokeExact(callState, fd, cmd, arg);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("unexpected checked exception from a downcall", t);
        }
    }

    /**
     * Checks that {@code fd} is an open file descriptor of this process.
     *
     * @throws io.gpusync.SyncException {@code EBADF} as {@link io.gpusync.SyncInvalidArgumentException}
     */
    static void requireOpen(int fd) {
        Errno.Scratch s = Errno.scratch();
        if (fcntl(s.callState, fd, F_GETFD, 0) < 0) {
            throw Errno.failure("fcntl(F_GETFD)", fd, ErrnoCalls.errno(s.callState));
        }
    }

    /**
     * A new close-on-exec fd on the same open file as {@code fd}, owned by the caller.
     *
     * @throws io.gpusync.SyncException {@code EBADF} as {@link io.gpusync.SyncInvalidArgumentException},
     *                                  {@code EMFILE} as a recoverable {@link io.gpusync.SyncBackendException}
     */
    static int duplicate(int fd) {
        Errno.Scratch s = Errno.scratch();
        int copy = fcntl(s.callState, fd, F_DUPFD_CLOEXEC, 0);
        if (copy < 0) {
            throw Errno.failure("fcntl(F_DUPFD_CLOEXEC)", fd, ErrnoCalls.errno(s.callState));
        }
        return copy;
    }
}
