package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.bindings.vulkan.Vulkan;

import java.util.HashMap;
import java.util.Map;

/**
 * {@code VkResult} names (built from the generated constants) and the mapping of failure codes to
 * gpusync's exceptions: {@code VK_ERROR_DEVICE_LOST} → {@link DeviceLostException}; everything else →
 * {@link SyncBackendException} carrying the code and its name, with an {@link ErrorKind} chosen by code.
 * {@code VK_TIMEOUT} is not handled here: the callers build the timeout message, which must say what was
 * waited on. Stateless and thread-safe.
 */
final class VkResults {
    private static final Map<Integer, String> NAMES = table();

    private static Map<Integer, String> table() {
        Map<Integer, String> names = new HashMap<>(); // the first name of a code wins (aliases follow it)
        names.putIfAbsent(Vulkan.VK_SUCCESS(), "VK_SUCCESS");
        names.putIfAbsent(Vulkan.VK_NOT_READY(), "VK_NOT_READY");
        names.putIfAbsent(Vulkan.VK_TIMEOUT(), "VK_TIMEOUT");
        names.putIfAbsent(Vulkan.VK_EVENT_SET(), "VK_EVENT_SET");
        names.putIfAbsent(Vulkan.VK_EVENT_RESET(), "VK_EVENT_RESET");
        names.putIfAbsent(Vulkan.VK_INCOMPLETE(), "VK_INCOMPLETE");
        names.putIfAbsent(Vulkan.VK_SUBOPTIMAL_KHR(), "VK_SUBOPTIMAL_KHR");
        names.putIfAbsent(Vulkan.VK_PIPELINE_COMPILE_REQUIRED(), "VK_PIPELINE_COMPILE_REQUIRED");
        names.putIfAbsent(Vulkan.VK_ERROR_OUT_OF_HOST_MEMORY(), "VK_ERROR_OUT_OF_HOST_MEMORY");
        names.putIfAbsent(Vulkan.VK_ERROR_OUT_OF_DEVICE_MEMORY(), "VK_ERROR_OUT_OF_DEVICE_MEMORY");
        names.putIfAbsent(Vulkan.VK_ERROR_INITIALIZATION_FAILED(), "VK_ERROR_INITIALIZATION_FAILED");
        names.putIfAbsent(Vulkan.VK_ERROR_DEVICE_LOST(), "VK_ERROR_DEVICE_LOST");
        names.putIfAbsent(Vulkan.VK_ERROR_MEMORY_MAP_FAILED(), "VK_ERROR_MEMORY_MAP_FAILED");
        names.putIfAbsent(Vulkan.VK_ERROR_LAYER_NOT_PRESENT(), "VK_ERROR_LAYER_NOT_PRESENT");
        names.putIfAbsent(Vulkan.VK_ERROR_EXTENSION_NOT_PRESENT(), "VK_ERROR_EXTENSION_NOT_PRESENT");
        names.putIfAbsent(Vulkan.VK_ERROR_FEATURE_NOT_PRESENT(), "VK_ERROR_FEATURE_NOT_PRESENT");
        names.putIfAbsent(Vulkan.VK_ERROR_INCOMPATIBLE_DRIVER(), "VK_ERROR_INCOMPATIBLE_DRIVER");
        names.putIfAbsent(Vulkan.VK_ERROR_TOO_MANY_OBJECTS(), "VK_ERROR_TOO_MANY_OBJECTS");
        names.putIfAbsent(Vulkan.VK_ERROR_FORMAT_NOT_SUPPORTED(), "VK_ERROR_FORMAT_NOT_SUPPORTED");
        names.putIfAbsent(Vulkan.VK_ERROR_FRAGMENTED_POOL(), "VK_ERROR_FRAGMENTED_POOL");
        names.putIfAbsent(Vulkan.VK_ERROR_UNKNOWN(), "VK_ERROR_UNKNOWN");
        names.putIfAbsent(Vulkan.VK_ERROR_OUT_OF_POOL_MEMORY(), "VK_ERROR_OUT_OF_POOL_MEMORY");
        names.putIfAbsent(Vulkan.VK_ERROR_INVALID_EXTERNAL_HANDLE(), "VK_ERROR_INVALID_EXTERNAL_HANDLE");
        names.putIfAbsent(Vulkan.VK_ERROR_FRAGMENTATION(), "VK_ERROR_FRAGMENTATION");
        names.putIfAbsent(Vulkan.VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS(), "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS");
        names.putIfAbsent(Vulkan.VK_ERROR_SURFACE_LOST_KHR(), "VK_ERROR_SURFACE_LOST_KHR");
        names.putIfAbsent(Vulkan.VK_ERROR_NATIVE_WINDOW_IN_USE_KHR(), "VK_ERROR_NATIVE_WINDOW_IN_USE_KHR");
        names.putIfAbsent(Vulkan.VK_ERROR_OUT_OF_DATE_KHR(), "VK_ERROR_OUT_OF_DATE_KHR");
        names.putIfAbsent(Vulkan.VK_ERROR_INCOMPATIBLE_DISPLAY_KHR(), "VK_ERROR_INCOMPATIBLE_DISPLAY_KHR");
        names.putIfAbsent(Vulkan.VK_ERROR_VALIDATION_FAILED_EXT(), "VK_ERROR_VALIDATION_FAILED_EXT");
        names.putIfAbsent(Vulkan.VK_ERROR_INVALID_SHADER_NV(), "VK_ERROR_INVALID_SHADER_NV");
        names.putIfAbsent(Vulkan.VK_ERROR_NOT_PERMITTED_KHR(), "VK_ERROR_NOT_PERMITTED_KHR");
        names.putIfAbsent(Vulkan.VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT(), "VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT");
        names.putIfAbsent(Vulkan.VK_ERROR_COMPRESSION_EXHAUSTED_EXT(), "VK_ERROR_COMPRESSION_EXHAUSTED_EXT");
        return Map.copyOf(names);
    }

    static final int SUCCESS = Vulkan.VK_SUCCESS();
    static final int NOT_READY = Vulkan.VK_NOT_READY();
    static final int TIMEOUT = Vulkan.VK_TIMEOUT();
    static final int DEVICE_LOST = Vulkan.VK_ERROR_DEVICE_LOST();

    private VkResults() {
    }

    /** The symbolic name of {@code code}, or {@code VkResult(<code>)} when it is not in the table. */
    static String name(int code) {
        String n = NAMES.get(code);
        return n != null ? n : "VkResult(" + code + ")";
    }

    /**
     * How a caller should react to a failure code: out-of-memory and object-count exhaustion are
     * {@link ErrorKind#RECOVERABLE} (freeing something may help); missing drivers, layers, extensions and
     * features, and rejected handles are {@link ErrorKind#CONFIGURATION}; device loss and
     * {@code VK_ERROR_UNKNOWN} (the driver cannot say what state it is in) are {@link ErrorKind#FATAL}.
     * Unexpected positive codes are {@link ErrorKind#RECOVERABLE}.
     */
    static ErrorKind kindOf(int code) {
        if (code == Vulkan.VK_ERROR_OUT_OF_HOST_MEMORY() || code == Vulkan.VK_ERROR_OUT_OF_DEVICE_MEMORY()
                || code == Vulkan.VK_ERROR_OUT_OF_POOL_MEMORY() || code == Vulkan.VK_ERROR_TOO_MANY_OBJECTS()
                || code == Vulkan.VK_ERROR_FRAGMENTED_POOL() || code == Vulkan.VK_ERROR_FRAGMENTATION()) {
            return ErrorKind.RECOVERABLE;
        }
        if (code == DEVICE_LOST || code == Vulkan.VK_ERROR_UNKNOWN()) {
            return ErrorKind.FATAL;
        }
        return code < 0 ? ErrorKind.CONFIGURATION : ErrorKind.RECOVERABLE;
    }

    /**
     * The exception for a failed call: {@code what} says what was being done ("vkWaitSemaphores on
     * VkSemaphore 0x… ≥ 5").
     */
    static SyncException failure(int code, String what) {
        if (code == DEVICE_LOST) {
            return new DeviceLostException(BackendKind.VULKAN, what + " failed: the device is lost ("
                    + name(code) + " = " + code + "); every later wait on this VkDevice fails too");
        }
        return new SyncBackendException(kindOf(code), BackendKind.VULKAN, code, name(code), what + " failed");
    }

    /** Throws {@link #failure} unless {@code code} is {@code VK_SUCCESS}. */
    static void check(int code, String what) {
        if (code != SUCCESS) {
            throw failure(code, what);
        }
    }

    /** {@code 0x…} form of a handle for messages. */
    static String hex(long handle) {
        return "0x" + Long.toHexString(handle);
    }
}
