package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.internal.NativeLibraries;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The guarded entry to the CUDA driver: {@link #ensure()} turns an absent {@code libcuda.so.1} (or a failing
 * {@code cuInit}) into {@link SyncNotSupportedException} <em>before</em> anything touches the generated
 * {@link Cuda} class, whose static initializer would otherwise throw {@link ExceptionInInitializerError} and
 * poison the class for the JVM's lifetime. Also the context push/pop helpers every CUDA call site shares.
 * Thread-safe.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
final class CudaDriver {
    static final String SONAME = "libcuda.so.1";
    private static final System.Logger LOG = System.getLogger(CudaDriver.class.getName());

    /** 8 bytes per thread for cuCtxPopCurrent's out-parameter (hot path of every push/pop pair). */
    private static final ThreadLocal<MemorySegment> POP_SLOT =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(ValueLayout.ADDRESS));

    private CudaDriver() {
    }

    /** Whether {@link #ensure()} has succeeded in this JVM. */
    static boolean isLoaded() {
        return CudaDriverService.get().driverLoaded();
    }

    /**
     * Loads the driver and runs {@code cuInit(0)} once (the process's {@link CudaDriverService} remembers the outcome).
     *
     * @throws SyncNotSupportedException if the driver is absent or cannot initialize (no device, stub library…)
     */
    static void ensure() {
        CudaDriverService.get().ensureDriver();
    }

    /**
     * Binds the driver and runs {@code cuInit(0)}: null on success, else the failure to remember (a failed
     * {@code cuInit} or bind). An absent library throws instead and is not remembered: cheap, and cached inside.
     */
    static SyncNotSupportedException load() {
        NativeLibraries.require(BackendKind.CUDA, SONAME);
        try {
            int r = Cuda.cuInit(0);
            if (r != CudaResults.SUCCESS) {
                return new SyncNotSupportedException(BackendKind.CUDA, "cuInit(0) failed: "
                        + CudaResults.name(r) + " (" + r + "); the CUDA driver cannot be used here");
            }
            return null;
        } catch (LinkageError e) {
            return new SyncNotSupportedException(BackendKind.CUDA, SONAME
                    + " could not be bound (" + e + "); the CUDA driver cannot be used here", e);
        }
    }

    /** The calling thread's current context, {@link MemorySegment#NULL} if none. */
    static MemorySegment currentContext() {
        ensure();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            CudaResults.check(Cuda.cuCtxGetCurrent(p), "cuCtxGetCurrent");
            return MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
        }
    }

    /** {@code context}, or the current context when {@code context} is NULL; throws if there is none. */
    static MemorySegment contextOrCurrent(MemorySegment context, String what) {
        if (context != null && !context.equals(MemorySegment.NULL)) {
            return MemorySegment.ofAddress(context.address());
        }
        MemorySegment current = currentContext();
        if (current.equals(MemorySegment.NULL)) {
            throw new SyncInvalidArgumentException(BackendKind.CUDA,
                    what + ": no context given and none is current on this thread");
        }
        return current;
    }

    /** The device ordinal of {@code context} ({@code cuCtxGetDevice} with the context pushed). */
    static int deviceOf(MemorySegment context) {
        try (Pushed p = Pushed.push(context, "cuCtxGetDevice"); Arena arena = Arena.ofConfined()) {
            MemorySegment dev = arena.allocate(ValueLayout.JAVA_INT);
            CudaResults.check(Cuda.cuCtxGetDevice(dev), "cuCtxGetDevice(context " + hex(context) + ")");
            return dev.get(ValueLayout.JAVA_INT, 0);
        }
    }

    /**
     * {@code cuCtxPopCurrent_v2}, for a pop that pairs with a successful push of {@code expected}; logs (never
     * throws) when the pop fails or pops something else — the release paths must not throw.
     */
    static void popQuietly(MemorySegment expected) {
        MemorySegment slot = POP_SLOT.get();
        int r = Cuda.cuCtxPopCurrent_v2(slot);
        if (r != CudaResults.SUCCESS) {
            LOG.log(System.Logger.Level.ERROR, "cuCtxPopCurrent_v2 after pushing " + hex(expected) + " failed: "
                    + CudaResults.name(r) + " (" + r + ")");
        } else if (slot.get(ValueLayout.ADDRESS, 0).address() != expected.address()) {
            LOG.log(System.Logger.Level.ERROR, "cuCtxPopCurrent_v2 popped " + hex(slot.get(ValueLayout.ADDRESS, 0))
                    + ", expected " + hex(expected) + ": someone changed this thread's context stack");
        }
    }

    static String hex(MemorySegment handle) {
        return "0x" + Long.toHexString(handle.address());
    }

    /**
     * A context pushed on the calling thread for the duration of a try-with-resources block; popped on close
     * if and only if the push succeeded. NULL pushes nothing (the calling thread's current context is used).
     */
    static final class Pushed implements AutoCloseable {
        private static final Pushed NOTHING = new Pushed(null);
        private final MemorySegment context;

        private Pushed(MemorySegment context) {
            this.context = context;
        }

        /** Pushes {@code context}; throws (nothing pushed) if the push fails. */
        static Pushed push(MemorySegment context, String what) {
            ensure();
            if (context == null || context.equals(MemorySegment.NULL)) {
                return NOTHING;
            }
            int r = Cuda.cuCtxPushCurrent_v2(context);
            if (r != CudaResults.SUCCESS) {
                throw CudaResults.exception(r, what + ": cuCtxPushCurrent_v2(" + hex(context) + ")");
            }
            return new Pushed(context);
        }

        /**
         * Pushes {@code context}, a context gpusync already holds for a pending wait (not one a caller just passed
         * in): a push that fails because the context was destroyed is {@link io.gpusync.DeviceLostException}
         * (see {@link CudaResults}).
         */
        static Pushed pushHeld(MemorySegment context, String what) {
            ensure();
            return pushHeldLoaded(context, what);
        }

        /** {@link #pushHeld} for a caller that has made sure the driver is loaded (no service lookup). */
        static Pushed pushHeldLoaded(MemorySegment context, String what) {
            if (context == null || context.equals(MemorySegment.NULL)) {
                return NOTHING;
            }
            int r = Cuda.cuCtxPushCurrent_v2(context);
            if (r != CudaResults.SUCCESS) {
                throw CudaResults.contextGone(r, what + ": cuCtxPushCurrent_v2(" + hex(context) + ")");
            }
            return new Pushed(context);
        }

        @Override
        public void close() {
            if (context != null) {
                popQuietly(context);
            }
        }
    }

    /**
     * Logs a failed release instead of throwing: at WARNING, except when the code says the context is dead (then
     * every release in it fails, which is expected, and the first log record of a JVM costs tens of ms of logging
     * set-up on whatever thread is failing waits) — at DEBUG.
     */
    static void logRelease(int r, String what) {
        if (r != CudaResults.SUCCESS) {
            LOG.log(CudaResults.isFatal(r) ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                    () -> what + " failed: " + CudaResults.name(r) + " (" + r + ")");
        }
    }

    static SyncException unsupported(String what, SyncException cause) {
        return new SyncNotSupportedException(BackendKind.CUDA, what + " failed: " + cause.getMessage(), cause);
    }

}
