package io.gpusync.opencl;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.internal.NativeLibraries;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

/**
 * The few OpenCL calls the backend makes, with their return codes checked, plus handle validation (gpusync's event
 * references are counted and released by {@link ClEventRelease}). Every entry point of the package calls
 * {@link #require()} before touching the generated {@link OpenCl} class (whose static initializer opens the library).
 */
final class Cl {
    static final String LIBRARY = "libOpenCL.so.1";

    /**
     * Per-thread out-parameter memory for probes (16 bytes, freed with the thread): a probe must not allocate
     * native memory on every call. Never used across a nested native call.
     */
    private static final ThreadLocal<MemorySegment> SCRATCH =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(16, 8));
    /**
     * The event callback's own out-parameter memory: a callback may run on a thread that is inside another
     * OpenCL call (PoCL calls back inside {@code clSetUserEventStatus} and {@code clSetEventCallback}), whose
     * arguments must not be overwritten.
     */
    private static final ThreadLocal<MemorySegment> UPCALL_SCRATCH =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(16, 8));

    private Cl() {
    }

    /** @throws io.gpusync.SyncNotSupportedException if libOpenCL.so.1 cannot be loaded */
    static void require() {
        NativeLibraries.require(BackendKind.OPENCL, LIBRARY);
    }

    /**
     * {@code handle} as a plain native address: rejects {@code null} (NPE), NULL and heap segments
     * ({@link SyncInvalidArgumentException}). A non-NULL address cannot be validated without calling the
     * driver with it; see {@link OpenClEvents}.
     */
    static MemorySegment handle(MemorySegment handle, String kind) {
        Objects.requireNonNull(handle, kind);
        if (!handle.isNative()) {
            throw new SyncInvalidArgumentException(BackendKind.OPENCL,
                    kind + " must be a native address, got a heap segment " + handle);
        }
        if (handle.address() == 0) {
            throw new SyncInvalidArgumentException(BackendKind.OPENCL, kind + " must not be NULL");
        }
        return MemorySegment.ofAddress(handle.address());
    }

    /** {@code handle} (a {@code cl_*} pointer held as a {@code long}, as JOCL/LWJGL do) as a segment. */
    static MemorySegment handle(long handle, String kind) {
        if (handle == 0) {
            throw new SyncInvalidArgumentException(BackendKind.OPENCL, kind + " must not be NULL (0)");
        }
        return MemorySegment.ofAddress(handle);
    }

    /**
     * The event's {@code CL_EVENT_COMMAND_EXECUTION_STATUS}: {@code CL_COMPLETE} (0), a positive
     * in-progress state, or a negative error.
     *
     * @throws io.gpusync.SyncException if the query itself fails
     */
    static int status(MemorySegment event, String what) {
        MemorySegment out = SCRATCH.get();
        int rc = OpenCl.clGetEventInfo(event, OpenCl.CL_EVENT_COMMAND_EXECUTION_STATUS(), Integer.BYTES, out,
                MemorySegment.NULL);
        ClErrors.check(rc, "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)", what);
        return out.get(ValueLayout.JAVA_INT, 0);
    }

    /** {@link #status}, or {@code fallback} if the query fails (for paths that must not throw). */
    static int statusOr(MemorySegment event, int fallback) {
        return statusOr(event, fallback, SCRATCH.get());
    }

    /** {@link #statusOr} for the event callback, in memory of its own. */
    static int statusInUpcall(MemorySegment event, int fallback) {
        return statusOr(event, fallback, UPCALL_SCRATCH.get());
    }

    private static int statusOr(MemorySegment event, int fallback, MemorySegment out) {
        int rc = OpenCl.clGetEventInfo(event, OpenCl.CL_EVENT_COMMAND_EXECUTION_STATUS(), Integer.BYTES, out,
                MemorySegment.NULL);
        return rc == OpenCl.CL_SUCCESS() ? out.get(ValueLayout.JAVA_INT, 0) : fallback;
    }

    /** The event's {@code CL_EVENT_REFERENCE_COUNT} (a debugging value; the tests use it). */
    static int referenceCount(MemorySegment event, String what) {
        MemorySegment out = SCRATCH.get();
        int rc = OpenCl.clGetEventInfo(event, OpenCl.CL_EVENT_REFERENCE_COUNT(), Integer.BYTES, out,
                MemorySegment.NULL);
        ClErrors.check(rc, "clGetEventInfo(CL_EVENT_REFERENCE_COUNT)", what);
        return out.get(ValueLayout.JAVA_INT, 0);
    }

    /** Adds a reference ({@code clRetainEvent}). */
    static void retainEvent(MemorySegment event, String what) {
        ClErrors.check(OpenCl.clRetainEvent(event), "clRetainEvent", what);
    }

    /** An {@code int}-valued {@code clGetEventInfo} parameter, or {@code fallback} if the query fails. */
    static int infoOr(MemorySegment event, int param, int fallback) {
        MemorySegment out = SCRATCH.get();
        int rc = OpenCl.clGetEventInfo(event, param, Integer.BYTES, out, MemorySegment.NULL);
        return rc == OpenCl.CL_SUCCESS() ? out.get(ValueLayout.JAVA_INT, 0) : fallback;
    }

    static String hex(MemorySegment handle) {
        return "0x" + Long.toHexString(handle.address());
    }
}
