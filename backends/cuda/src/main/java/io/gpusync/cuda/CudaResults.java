package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.internal.CStrings;
import io.gpusync.internal.NativeLibraries;

import java.io.InputStream;
import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.FieldModel;
import java.lang.classfile.constantpool.IntegerEntry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code CUresult} codes: their names and what gpusync makes of them.
 *
 * <p><b>Names.</b> {@link #name(int)} asks the driver ({@code cuGetErrorName}) when {@code libcuda.so.1} is
 * loadable (the driver knows codes newer than our header), and otherwise, or when the driver does not know the
 * code, uses a static table of every {@code CUDA_SUCCESS}/{@code CUDA_ERROR_*} constant of the generated
 * {@link Cuda} bindings (CUDA 13.0 headers). The table is read from the constant-value attributes of
 * {@code Cuda.class} with the class-file API, <em>without initializing</em> {@link Cuda} (whose static
 * initializer opens the driver), so it works on a machine without a driver, and it can never drift from the
 * generated constants.
 *
 * <p><b>Classification</b>: the table in the package documentation ({@code package-info.java}).
 * The test {@code CudaResultsTest} checks every literal code against its generated name; the gpu tests provoke
 * 719/715 (a trapping kernel) and 201 (a destroyed context).
 *
 * <p>Stateless and thread-safe.
 */
final class CudaResults {
    /** {@code CUDA_SUCCESS}. */
    public static final int SUCCESS = 0;
    /** {@code CUDA_ERROR_NOT_READY}: a query's "not yet" — never an error for gpusync. */
    public static final int NOT_READY = 600;
    static final int INVALID_CONTEXT = 201;
    static final int CONTEXT_IS_DESTROYED = 709;

    // Literal codes (the CUresult ABI never renumbers); CudaResultsTest checks each against the generated name.
    private static final Set<Integer> STICKY = Set.of(
            214, // CUDA_ERROR_ECC_UNCORRECTABLE
            220, // CUDA_ERROR_NVLINK_UNCORRECTABLE
            226, // CUDA_ERROR_CONTAINED
            700, // CUDA_ERROR_ILLEGAL_ADDRESS
            702, // CUDA_ERROR_LAUNCH_TIMEOUT
            710, // CUDA_ERROR_ASSERT
            714, // CUDA_ERROR_HARDWARE_STACK_ERROR
            715, // CUDA_ERROR_ILLEGAL_INSTRUCTION
            716, // CUDA_ERROR_MISALIGNED_ADDRESS
            717, // CUDA_ERROR_INVALID_ADDRESS_SPACE
            718, // CUDA_ERROR_INVALID_PC
            719, // CUDA_ERROR_LAUNCH_FAILED
            721, // CUDA_ERROR_TENSOR_MEMORY_LEAK
            810, // CUDA_ERROR_MPS_CLIENT_TERMINATED
            911, // CUDA_ERROR_EXTERNAL_DEVICE
            916  // CUDA_ERROR_KEY_ROTATION
    );
    private static final Set<Integer> CONTEXT_GONE = Set.of(
            4,   // CUDA_ERROR_DEINITIALIZED
            709, // CUDA_ERROR_CONTEXT_IS_DESTROYED
            999  // CUDA_ERROR_UNKNOWN
    );
    private static final Set<Integer> NOT_SUPPORTED = Set.of(
            34,  // CUDA_ERROR_STUB_LIBRARY
            36,  // CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER
            100, // CUDA_ERROR_NO_DEVICE
            102, // CUDA_ERROR_DEVICE_NOT_LICENSED
            209, // CUDA_ERROR_NO_BINARY_FOR_GPU
            217, // CUDA_ERROR_PEER_ACCESS_UNSUPPORTED
            221, // CUDA_ERROR_JIT_COMPILER_NOT_FOUND
            222, // CUDA_ERROR_UNSUPPORTED_PTX_VERSION
            223, // CUDA_ERROR_JIT_COMPILATION_DISABLED
            224, // CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY
            225, // CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC
            801, // CUDA_ERROR_NOT_SUPPORTED
            802, // CUDA_ERROR_SYSTEM_NOT_READY
            803, // CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
            804, // CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE
            811, // CUDA_ERROR_CDP_NOT_SUPPORTED
            812  // CUDA_ERROR_CDP_VERSION_MISMATCH
    );
    private static final Set<Integer> RECOVERABLE = Set.of(
            2,   // CUDA_ERROR_OUT_OF_MEMORY
            46,  // CUDA_ERROR_DEVICE_UNAVAILABLE
            600, // CUDA_ERROR_NOT_READY
            701, // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
            805, // CUDA_ERROR_MPS_CONNECTION_FAILED
            806, // CUDA_ERROR_MPS_RPC_FAILURE
            807, // CUDA_ERROR_MPS_SERVER_NOT_READY
            808, // CUDA_ERROR_MPS_MAX_CLIENTS_REACHED
            809, // CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED
            909  // CUDA_ERROR_TIMEOUT
    );

    private CudaResults() {
    }

    /**
     * The symbolic name of {@code code} ({@code CUDA_ERROR_ILLEGAL_ADDRESS}), or {@code "CUresult <code>"} when
     * neither the driver nor the table knows it. Never throws, never initializes the bindings without a driver.
     */
    public static String name(int code) {
        String fromDriver = driverName(code);
        if (fromDriver != null) {
            return fromDriver;
        }
        String fromTable = Table.NAMES.get(code);
        return fromTable != null ? fromTable : "CUresult " + code;
    }

    /** The name from the generated constants only (no driver call); empty if the header has no such code. */
    public static java.util.Optional<String> tableName(int code) {
        return java.util.Optional.ofNullable(Table.NAMES.get(code));
    }

    /** Every {@code CUresult} of the generated bindings, by code (unmodifiable, sorted). */
    public static Map<Integer, String> table() {
        return Table.NAMES;
    }

    /**
     * Whether {@code code} is a sticky context error: the context cannot be used any more and every later call
     * in it returns an error (CUDA: "the process must be terminated and relaunched"; with primary contexts that
     * is the device for the whole process).
     */
    public static boolean isStickyError(int code) {
        return contains(STICKY, code);
    }

    /** Whether {@code code} means the context behind a wait is unusable: sticky, deinitialized or destroyed. */
    public static boolean isFatal(int code) {
        return contains(STICKY, code) || contains(CONTEXT_GONE, code);
    }

    /** The {@link ErrorKind} gpusync assigns to {@code code} (see the class comment). */
    public static ErrorKind kindOf(int code) {
        if (isFatal(code)) {
            return ErrorKind.FATAL;
        }
        if (contains(RECOVERABLE, code)) {
            return ErrorKind.RECOVERABLE;
        }
        return ErrorKind.CONFIGURATION;
    }

    /**
     * The exception for a failed call: {@code what} says which call on which object. See the class comment for
     * the mapping. {@code code} must not be {@link #SUCCESS}.
     */
    public static SyncException exception(int code, String what) {
        String name = name(code);
        SyncBackendException coded = new SyncBackendException(kindOf(code), BackendKind.CUDA, code, name, what);
        if (isFatal(code)) {
            String why = isStickyError(code)
                    ? "sticky CUDA context error: the context is unusable from now on"
                    : code == 999 ? "unknown internal CUDA error: the context cannot be trusted any more"
                    : "the CUDA context or driver is gone";
            return new DeviceLostException(BackendKind.CUDA, what + ": " + name + " (" + code + "), " + why, coded);
        }
        if (contains(NOT_SUPPORTED, code)) {
            return new SyncNotSupportedException(BackendKind.CUDA, what + ": " + name + " (" + code + ")", coded);
        }
        return coded;
    }

    /**
     * The exception for a failed call on a context gpusync already holds (a pending wait's, a health check's):
     * {@code CUDA_ERROR_INVALID_CONTEXT} there means the context was destroyed under the wait, which can then never
     * complete — {@link DeviceLostException} ({@link ErrorKind#FATAL}); any other code as {@link #exception}.
     */
    static SyncException contextGone(int code, String what) {
        if (code != INVALID_CONTEXT) {
            return exception(code, what);
        }
        SyncBackendException coded = new SyncBackendException(ErrorKind.FATAL, BackendKind.CUDA, code, name(code), what);
        return new DeviceLostException(BackendKind.CUDA, what + ": " + name(code) + " (" + code
                + "), the CUDA context behind this wait was destroyed", coded);
    }

    /** Throws {@link #exception} unless {@code code} is {@link #SUCCESS}. */
    static void check(int code, String what) {
        if (code != SUCCESS) {
            throw exception(code, what);
        }
    }

    private static boolean contains(Set<Integer> codes, int code) {
        return codes.contains(code);
    }

    private static String driverName(int code) {
        if (!CudaDriver.isLoaded() && !NativeLibraries.isAvailable(CudaDriver.SONAME)) {
            return null;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            if (Cuda.cuGetErrorName(code, p) != SUCCESS) {
                return null; // CUDA_ERROR_INVALID_VALUE: the driver does not know the code
            }
            MemorySegment s = p.get(ValueLayout.ADDRESS, 0);
            return s.equals(MemorySegment.NULL) ? null : CStrings.read(s);
        } catch (LinkageError | RuntimeException e) {
            return null;
        }
    }

    /** The generated constants, read from {@code Cuda.class} without initializing it. */
    private static final class Table {
        static final Map<Integer, String> NAMES = load();

        private static Map<Integer, String> load() {
            Map<Integer, String> names = new TreeMap<>();
            try (InputStream in = Cuda.class.getResourceAsStream("Cuda.class")) {
                if (in == null) {
                    return Collections.emptyMap();
                }
                ClassModel model = ClassFile.of().parse(in.readAllBytes());
                for (FieldModel field : model.fields()) {
                    String n = field.fieldName().stringValue();
                    if (!n.equals("CUDA_SUCCESS") && !n.startsWith("CUDA_ERROR_")) {
                        continue;
                    }
                    field.findAttribute(Attributes.constantValue()).ifPresent(cv -> {
                        if (cv.constant() instanceof IntegerEntry ie) {
                            names.putIfAbsent(ie.intValue(), n);
                        }
                    });
                }
            } catch (Exception | LinkageError e) {
                System.getLogger(CudaResults.class.getName()).log(System.Logger.Level.WARNING,
                        "cannot read the CUresult names from the generated bindings", e);
            }
            return Map.copyOf(names);
        }
    }
}
