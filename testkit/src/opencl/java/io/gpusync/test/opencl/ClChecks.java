package io.gpusync.test.opencl;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncNotSupportedException;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;

/** The producers' checks of OpenCL results and of the ICD loader. Stateless. */
final class ClChecks {
    /** {@code cl_khr_icd}'s "no platform" code, which the loader returns when no ICD is installed. */
    static final int CL_PLATFORM_NOT_FOUND_KHR = -1001;

    private ClChecks() {
    }

    /** Throws {@link SyncNotSupportedException} unless {@code libOpenCL.so.1} loads (before any binding is touched). */
    static void requireLibrary() {
        try {
            SymbolLookup.libraryLookup("libOpenCL.so.1", Arena.global());
        } catch (IllegalArgumentException absent) {
            throw new SyncNotSupportedException(BackendKind.OPENCL, "libOpenCL.so.1 is not installed");
        }
    }

    /** Throws {@link #callFailed} unless {@code rc} is {@code CL_SUCCESS} (0). */
    static void check(int rc, String call, String what) {
        if (rc != 0) {
            throw callFailed(rc, call, what);
        }
    }

    /** The exception for {@code call} on {@code what} that returned {@code rc}. */
    static SyncException callFailed(int rc, String call, String what) {
        return new SyncBackendException(ErrorKind.FATAL, BackendKind.OPENCL, rc, "cl_int " + rc,
                call + " failed on " + what);
    }
}
