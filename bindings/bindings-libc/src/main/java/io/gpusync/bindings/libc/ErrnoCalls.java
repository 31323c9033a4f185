package io.gpusync.bindings.libc;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Hand-written libc downcalls that capture {@code errno} (jextract cannot generate
 * {@link Linker.Option#captureCallState(String...)} downcalls). This is the only hand-written code in
 * the bindings module; it lives in {@code src/main/java}, the generated {@link Libc} in
 * {@code src/generated/java}.
 *
 * <p>Usage: allocate one call-state segment per thread (or per wait loop) with
 * {@link #allocateCallState(Arena)}, pass it as the first argument of every call, and read
 * {@link #errno(MemorySegment)} when the call returned {@code -1}. No allocation happens per call.
 * Compare errno values against the generated constants, e.g. {@code Libc.EINTR()}, {@code Libc.EAGAIN()}.
 *
 * <pre>{@code
 * MemorySegment cs = ErrnoCalls.allocateCallState(arena);
 * int fd = ErrnoCalls.eventfd(cs, 0, Libc.EFD_CLOEXEC() | Libc.EFD_NONBLOCK());
 * if (fd < 0) throw new IOException("eventfd: errno " + ErrnoCalls.errno(cs));
 * }</pre>
 *
 * <p>libc is found through {@link Linker#defaultLookup()}; nothing is loaded.
 */
public final class ErrnoCalls {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");
    private static final StructLayout CALL_STATE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CALL_STATE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private static final MethodHandle EVENTFD = downcall("eventfd",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle POLL = downcall("poll",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    private static final MethodHandle READ = downcall("read",
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle WRITE = downcall("write",
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle CLOSE = downcall("close",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle EPOLL_WAIT = downcall("epoll_wait",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    private static final MethodHandle GETRLIMIT = downcall("getrlimit",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
    private static final MethodHandle SETRLIMIT = downcall("setrlimit",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));

    /** {@code RLIMIT_NOFILE} on Linux (x86-64 and AArch64 alike; the generic value of asm-generic/resource.h). */
    public static final int RLIMIT_NOFILE = 7;

    /** {@code struct rlimit { rlim_t rlim_cur; rlim_t rlim_max; }} on 64-bit Linux ({@code rlim_t} = unsigned long). */
    public static final StructLayout RLIMIT = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("rlim_cur"), ValueLayout.JAVA_LONG.withName("rlim_max"));

    /** {@code RLIM_INFINITY} on Linux: an unlimited {@code rlim_cur} or {@code rlim_max} (all bits set). */
    public static final long RLIM_INFINITY = -1L;

    private ErrnoCalls() {
    }

    private static MethodHandle downcall(String name, FunctionDescriptor fd) {
        MemorySegment symbol = LINKER.defaultLookup().find(name)
                .orElseThrow(() -> new UnsatisfiedLinkError("libc symbol not found: " + name));
        // the call-state segment is the first parameter of the returned handle
        return LINKER.downcallHandle(symbol, fd, CAPTURE_ERRNO);
    }

    /**
     * Allocates a call-state segment that receives {@code errno} after each call made with it.
     *
     * @param arena the arena owning the segment; one segment may be reused for any number of calls
     *              on one thread at a time
     * @return a segment of {@link Linker.Option#captureStateLayout()}
     */
    public static MemorySegment allocateCallState(Arena arena) {
        return arena.allocate(CALL_STATE_LAYOUT);
    }

    /**
     * Returns the {@code errno} captured by the last call that used {@code callState}.
     * Only meaningful when that call reported failure (usually a return of {@code -1}).
     *
     * @param callState a segment from {@link #allocateCallState(Arena)}
     * @return the captured errno value
     */
    public static int errno(MemorySegment callState) {
        return (int) ERRNO.get(callState, 0L);
    }

    /**
     * {@code int eventfd(unsigned int initval, int flags)}.
     *
     * @param callState receives errno, see {@link #allocateCallState(Arena)}
     * @param initval   initial counter value
     * @param flags     {@code Libc.EFD_CLOEXEC() | Libc.EFD_NONBLOCK() | Libc.EFD_SEMAPHORE()}
     * @return the new file descriptor, or -1 with errno set
     */
    public static int eventfd(MemorySegment callState, int initval, int flags) {
        try {
            return (int) EVENTFD.invokeExact(callState, initval, flags);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code int poll(struct pollfd *fds, nfds_t nfds, int timeout)}.
     *
     * @param callState receives errno
     * @param fds       array of {@link pollfd} structs
     * @param nfds      number of entries in {@code fds}
     * @param timeoutMs timeout in milliseconds; -1 waits forever, 0 returns at once
     * @return number of ready descriptors, 0 on timeout, or -1 with errno set (e.g. {@code EINTR})
     */
    public static int poll(MemorySegment callState, MemorySegment fds, long nfds, int timeoutMs) {
        try {
            return (int) POLL.invokeExact(callState, fds, nfds, timeoutMs);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ssize_t read(int fd, void *buf, size_t count)}.
     *
     * @param callState receives errno
     * @param fd        file descriptor
     * @param buf       destination, at least {@code count} bytes
     * @param count     bytes to read (8 for an eventfd)
     * @return bytes read, or -1 with errno set (e.g. {@code EAGAIN} on a non-blocking empty eventfd)
     */
    public static long read(MemorySegment callState, int fd, MemorySegment buf, long count) {
        try {
            return (long) READ.invokeExact(callState, fd, buf, count);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code ssize_t write(int fd, const void *buf, size_t count)}.
     *
     * @param callState receives errno
     * @param fd        file descriptor
     * @param buf       source, at least {@code count} bytes
     * @param count     bytes to write (8 for an eventfd)
     * @return bytes written, or -1 with errno set
     */
    public static long write(MemorySegment callState, int fd, MemorySegment buf, long count) {
        try {
            return (long) WRITE.invokeExact(callState, fd, buf, count);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code int close(int fd)}.
     *
     * @param callState receives errno
     * @param fd        file descriptor
     * @return 0, or -1 with errno set (e.g. {@code EBADF})
     */
    public static int close(MemorySegment callState, int fd) {
        try {
            return (int) CLOSE.invokeExact(callState, fd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)}.
     *
     * @param callState receives errno
     * @param epfd      epoll file descriptor (from {@code Libc.epoll_create1})
     * @param events    array of {@link epoll_event} structs, at least {@code maxEvents} long
     * @param maxEvents capacity of {@code events}, &gt; 0
     * @param timeoutMs timeout in milliseconds; -1 waits forever
     * @return number of ready events, 0 on timeout, or -1 with errno set
     */
    public static int epollWait(MemorySegment callState, int epfd, MemorySegment events, int maxEvents, int timeoutMs) {
        try {
            return (int) EPOLL_WAIT.invokeExact(callState, epfd, events, maxEvents, timeoutMs);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code int getrlimit(int resource, struct rlimit *rlim)}.
     *
     * @param callState receives errno
     * @param resource  e.g. {@link #RLIMIT_NOFILE}
     * @param rlim      a segment of {@link #RLIMIT}, filled on success ({@code rlim_cur} at offset 0, {@code rlim_max}
     *                  at 8; {@link #RLIM_INFINITY} means unlimited)
     * @return 0, or -1 with errno set
     */
    public static int getrlimit(MemorySegment callState, int resource, MemorySegment rlim) {
        try {
            return (int) GETRLIMIT.invokeExact(callState, resource, rlim);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code int setrlimit(int resource, const struct rlimit *rlim)}: an unprivileged process may set its soft limit
     * anywhere up to its hard limit, and lower (never raise) the hard one.
     *
     * @param callState receives errno
     * @param resource  e.g. {@link #RLIMIT_NOFILE}
     * @param rlim      a segment of {@link #RLIMIT}
     * @return 0, or -1 with errno set ({@code EPERM} above the hard limit, {@code EINVAL} soft above hard)
     */
    public static int setrlimit(MemorySegment callState, int resource, MemorySegment rlim) {
        try {
            return (int) SETRLIMIT.invokeExact(callState, resource, rlim);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException re) {
            return re;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException("unexpected checked exception from a downcall", t);
    }
}
