package io.gpusync.opencl;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.opencl.OpenCl;

import java.util.Map;

/**
 * OpenCL status codes: their names (a table built from the generated constants, so a name can never
 * disagree with its value) and the exception each one becomes.
 *
 * <p>Two contexts, two mappings:
 * <ul>
 *   <li>{@link #callFailed} — an API call returned an error: {@code CL_INVALID_*}, build and
 *       capability codes are {@link ErrorKind#CONFIGURATION} (the same call fails the same way);
 *       {@code CL_OUT_OF_RESOURCES}, {@code CL_OUT_OF_HOST_MEMORY},
 *       {@code CL_MEM_OBJECT_ALLOCATION_FAILURE} are {@link ErrorKind#RECOVERABLE} (transient exhaustion);
 *       {@code CL_DEVICE_NOT_AVAILABLE} is a {@link DeviceLostException} (the device went away).</li>
 *   <li>{@link #eventFailed} — an event's execution status is negative: the command was aborted. That is
 *       {@link ErrorKind#RECOVERABLE} (this work failed; the device is fine and resubmitting may succeed),
 *       whatever the code — OpenCL has no "context lost" status — except {@code CL_DEVICE_NOT_AVAILABLE},
 *       which says the device is gone. The code and its name are carried either way.</li>
 * </ul>
 * Only called after {@code NativeLibraries.require} (the constants live in the generated header class).
 */
final class ClErrors {
    /** {@code cl_ext.h}/ICD loader code, not in {@code cl.h}: no ICD (platform) is installed. */
    static final int CL_PLATFORM_NOT_FOUND_KHR = -1001;

    private static final Map<Integer, String> NAMES = table();

    private ClErrors() {
    }

    private static Map<Integer, String> table() {
        return Map.ofEntries(
            e(OpenCl.CL_SUCCESS(), "CL_SUCCESS"),
            e(OpenCl.CL_DEVICE_NOT_FOUND(), "CL_DEVICE_NOT_FOUND"),
            e(OpenCl.CL_DEVICE_NOT_AVAILABLE(), "CL_DEVICE_NOT_AVAILABLE"),
            e(OpenCl.CL_COMPILER_NOT_AVAILABLE(), "CL_COMPILER_NOT_AVAILABLE"),
            e(OpenCl.CL_MEM_OBJECT_ALLOCATION_FAILURE(), "CL_MEM_OBJECT_ALLOCATION_FAILURE"),
            e(OpenCl.CL_OUT_OF_RESOURCES(), "CL_OUT_OF_RESOURCES"),
            e(OpenCl.CL_OUT_OF_HOST_MEMORY(), "CL_OUT_OF_HOST_MEMORY"),
            e(OpenCl.CL_PROFILING_INFO_NOT_AVAILABLE(), "CL_PROFILING_INFO_NOT_AVAILABLE"),
            e(OpenCl.CL_MEM_COPY_OVERLAP(), "CL_MEM_COPY_OVERLAP"),
            e(OpenCl.CL_IMAGE_FORMAT_MISMATCH(), "CL_IMAGE_FORMAT_MISMATCH"),
            e(OpenCl.CL_IMAGE_FORMAT_NOT_SUPPORTED(), "CL_IMAGE_FORMAT_NOT_SUPPORTED"),
            e(OpenCl.CL_BUILD_PROGRAM_FAILURE(), "CL_BUILD_PROGRAM_FAILURE"),
            e(OpenCl.CL_MAP_FAILURE(), "CL_MAP_FAILURE"),
            e(OpenCl.CL_MISALIGNED_SUB_BUFFER_OFFSET(), "CL_MISALIGNED_SUB_BUFFER_OFFSET"),
            e(OpenCl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST(), "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"),
            e(OpenCl.CL_COMPILE_PROGRAM_FAILURE(), "CL_COMPILE_PROGRAM_FAILURE"),
            e(OpenCl.CL_LINKER_NOT_AVAILABLE(), "CL_LINKER_NOT_AVAILABLE"),
            e(OpenCl.CL_LINK_PROGRAM_FAILURE(), "CL_LINK_PROGRAM_FAILURE"),
            e(OpenCl.CL_DEVICE_PARTITION_FAILED(), "CL_DEVICE_PARTITION_FAILED"),
            e(OpenCl.CL_KERNEL_ARG_INFO_NOT_AVAILABLE(), "CL_KERNEL_ARG_INFO_NOT_AVAILABLE"),
            e(OpenCl.CL_INVALID_VALUE(), "CL_INVALID_VALUE"),
            e(OpenCl.CL_INVALID_DEVICE_TYPE(), "CL_INVALID_DEVICE_TYPE"),
            e(OpenCl.CL_INVALID_PLATFORM(), "CL_INVALID_PLATFORM"),
            e(OpenCl.CL_INVALID_DEVICE(), "CL_INVALID_DEVICE"),
            e(OpenCl.CL_INVALID_CONTEXT(), "CL_INVALID_CONTEXT"),
            e(OpenCl.CL_INVALID_QUEUE_PROPERTIES(), "CL_INVALID_QUEUE_PROPERTIES"),
            e(OpenCl.CL_INVALID_COMMAND_QUEUE(), "CL_INVALID_COMMAND_QUEUE"),
            e(OpenCl.CL_INVALID_HOST_PTR(), "CL_INVALID_HOST_PTR"),
            e(OpenCl.CL_INVALID_MEM_OBJECT(), "CL_INVALID_MEM_OBJECT"),
            e(OpenCl.CL_INVALID_IMAGE_FORMAT_DESCRIPTOR(), "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR"),
            e(OpenCl.CL_INVALID_IMAGE_SIZE(), "CL_INVALID_IMAGE_SIZE"),
            e(OpenCl.CL_INVALID_SAMPLER(), "CL_INVALID_SAMPLER"),
            e(OpenCl.CL_INVALID_BINARY(), "CL_INVALID_BINARY"),
            e(OpenCl.CL_INVALID_BUILD_OPTIONS(), "CL_INVALID_BUILD_OPTIONS"),
            e(OpenCl.CL_INVALID_PROGRAM(), "CL_INVALID_PROGRAM"),
            e(OpenCl.CL_INVALID_PROGRAM_EXECUTABLE(), "CL_INVALID_PROGRAM_EXECUTABLE"),
            e(OpenCl.CL_INVALID_KERNEL_NAME(), "CL_INVALID_KERNEL_NAME"),
            e(OpenCl.CL_INVALID_KERNEL_DEFINITION(), "CL_INVALID_KERNEL_DEFINITION"),
            e(OpenCl.CL_INVALID_KERNEL(), "CL_INVALID_KERNEL"),
            e(OpenCl.CL_INVALID_ARG_INDEX(), "CL_INVALID_ARG_INDEX"),
            e(OpenCl.CL_INVALID_ARG_VALUE(), "CL_INVALID_ARG_VALUE"),
            e(OpenCl.CL_INVALID_ARG_SIZE(), "CL_INVALID_ARG_SIZE"),
            e(OpenCl.CL_INVALID_KERNEL_ARGS(), "CL_INVALID_KERNEL_ARGS"),
            e(OpenCl.CL_INVALID_WORK_DIMENSION(), "CL_INVALID_WORK_DIMENSION"),
            e(OpenCl.CL_INVALID_WORK_GROUP_SIZE(), "CL_INVALID_WORK_GROUP_SIZE"),
            e(OpenCl.CL_INVALID_WORK_ITEM_SIZE(), "CL_INVALID_WORK_ITEM_SIZE"),
            e(OpenCl.CL_INVALID_GLOBAL_OFFSET(), "CL_INVALID_GLOBAL_OFFSET"),
            e(OpenCl.CL_INVALID_EVENT_WAIT_LIST(), "CL_INVALID_EVENT_WAIT_LIST"),
            e(OpenCl.CL_INVALID_EVENT(), "CL_INVALID_EVENT"),
            e(OpenCl.CL_INVALID_OPERATION(), "CL_INVALID_OPERATION"),
            e(OpenCl.CL_INVALID_GL_OBJECT(), "CL_INVALID_GL_OBJECT"),
            e(OpenCl.CL_INVALID_BUFFER_SIZE(), "CL_INVALID_BUFFER_SIZE"),
            e(OpenCl.CL_INVALID_MIP_LEVEL(), "CL_INVALID_MIP_LEVEL"),
            e(OpenCl.CL_INVALID_GLOBAL_WORK_SIZE(), "CL_INVALID_GLOBAL_WORK_SIZE"),
            e(OpenCl.CL_INVALID_PROPERTY(), "CL_INVALID_PROPERTY"),
            e(OpenCl.CL_INVALID_IMAGE_DESCRIPTOR(), "CL_INVALID_IMAGE_DESCRIPTOR"),
            e(OpenCl.CL_INVALID_COMPILER_OPTIONS(), "CL_INVALID_COMPILER_OPTIONS"),
            e(OpenCl.CL_INVALID_LINKER_OPTIONS(), "CL_INVALID_LINKER_OPTIONS"),
            e(OpenCl.CL_INVALID_DEVICE_PARTITION_COUNT(), "CL_INVALID_DEVICE_PARTITION_COUNT"),
            e(OpenCl.CL_INVALID_PIPE_SIZE(), "CL_INVALID_PIPE_SIZE"),
            e(OpenCl.CL_INVALID_DEVICE_QUEUE(), "CL_INVALID_DEVICE_QUEUE"),
            e(OpenCl.CL_INVALID_SPEC_ID(), "CL_INVALID_SPEC_ID"),
            e(OpenCl.CL_MAX_SIZE_RESTRICTION_EXCEEDED(), "CL_MAX_SIZE_RESTRICTION_EXCEEDED"),
            e(CL_PLATFORM_NOT_FOUND_KHR, "CL_PLATFORM_NOT_FOUND_KHR"));
    }

    private static Map.Entry<Integer, String> e(int code, String name) {
        return Map.entry(code, name);
    }

    /** The symbolic name of {@code code}, or {@code CL_UNKNOWN_ERROR} (never null). */
    static String name(int code) {
        return NAMES.getOrDefault(code, code < 0 ? "CL_UNKNOWN_ERROR" : "CL_UNKNOWN_STATUS");
    }

    /** Every name in the table, by code (for tests). */
    static Map<Integer, String> names() {
        return NAMES;
    }

    /** Throws {@link #callFailed} unless {@code rc} is {@code CL_SUCCESS}. */
    static void check(int rc, String call, String what) {
        if (rc != OpenCl.CL_SUCCESS()) {
            throw callFailed(rc, call, what);
        }
    }

    /** The exception for API call {@code call} on {@code what} returning {@code rc}. */
    static SyncException callFailed(int rc, String call, String what) {
        String message = call + " failed on " + what;
        if (rc == OpenCl.CL_DEVICE_NOT_AVAILABLE()) {
            return new DeviceLostException(BackendKind.OPENCL, message + " (" + name(rc) + " = " + rc + ")");
        }
        if (rc == CL_PLATFORM_NOT_FOUND_KHR || rc == OpenCl.CL_DEVICE_NOT_FOUND()
                || rc == OpenCl.CL_COMPILER_NOT_AVAILABLE() || rc == OpenCl.CL_LINKER_NOT_AVAILABLE()) {
            return new SyncNotSupportedException(BackendKind.OPENCL, message + " (" + name(rc) + " = " + rc + ")");
        }
        if (rc == OpenCl.CL_INVALID_EVENT()) {
            return new SyncInvalidArgumentException(BackendKind.OPENCL,
                    message + ": not a valid cl_event (" + name(rc) + " = " + rc + ")");
        }
        return new SyncBackendException(callKind(rc), BackendKind.OPENCL, rc, name(rc), message);
    }

    static ErrorKind callKind(int rc) {
        if (rc == OpenCl.CL_OUT_OF_RESOURCES() || rc == OpenCl.CL_OUT_OF_HOST_MEMORY()
                || rc == OpenCl.CL_MEM_OBJECT_ALLOCATION_FAILURE()
                || rc == OpenCl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST()
                || rc == OpenCl.CL_MAP_FAILURE()) {
            return ErrorKind.RECOVERABLE;
        }
        if (rc == OpenCl.CL_DEVICE_NOT_AVAILABLE()) {
            return ErrorKind.FATAL;
        }
        return ErrorKind.CONFIGURATION;
    }

    /** The exception for an event whose execution status is the negative {@code status}. */
    static SyncException eventFailed(int status, String what) {
        String message = what + " was abnormally terminated: its execution status is negative"
                + (status == -1 ? " (PoCL gives -1 to a command aborted because an event in its wait list failed)" : "");
        if (status == OpenCl.CL_DEVICE_NOT_AVAILABLE()) {
            return new DeviceLostException(BackendKind.OPENCL,
                    message + " (" + name(status) + " = " + status + ")");
        }
        return new SyncBackendException(ErrorKind.RECOVERABLE, BackendKind.OPENCL, status, name(status), message);
    }
}
