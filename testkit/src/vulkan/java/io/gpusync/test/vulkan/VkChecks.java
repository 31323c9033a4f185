package io.gpusync.test.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.vulkan.Vulkan;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;

/** The producers' checks of {@code VkResult}s and of the Vulkan loader. Stateless. */
final class VkChecks {
    private VkChecks() {
    }

    /** Throws {@link SyncNotSupportedException} unless {@code libvulkan.so.1} loads (before any binding is touched). */
    static void requireLoader() {
        try {
            SymbolLookup.libraryLookup("libvulkan.so.1", Arena.global());
        } catch (IllegalArgumentException absent) {
            throw new SyncNotSupportedException(BackendKind.VULKAN, "libvulkan.so.1 is not installed");
        }
    }

    /** Throws the exception for a failed {@code what} unless {@code code} is {@code VK_SUCCESS}. */
    static void check(int code, String what) {
        if (code == Vulkan.VK_SUCCESS()) {
            return;
        }
        if (code == Vulkan.VK_ERROR_DEVICE_LOST()) {
            throw new DeviceLostException(BackendKind.VULKAN, what + " failed: VK_ERROR_DEVICE_LOST");
        }
        throw new SyncBackendException(ErrorKind.FATAL, BackendKind.VULKAN, code, name(code), what + " failed");
    }

    /** A few {@code VkResult} names, else the number. */
    static String name(int code) {
        if (code == Vulkan.VK_SUCCESS()) {
            return "VK_SUCCESS";
        } else if (code == Vulkan.VK_ERROR_INCOMPATIBLE_DRIVER()) {
            return "VK_ERROR_INCOMPATIBLE_DRIVER";
        } else if (code == Vulkan.VK_ERROR_INITIALIZATION_FAILED()) {
            return "VK_ERROR_INITIALIZATION_FAILED";
        } else if (code == Vulkan.VK_ERROR_EXTENSION_NOT_PRESENT()) {
            return "VK_ERROR_EXTENSION_NOT_PRESENT";
        } else if (code == Vulkan.VK_ERROR_DEVICE_LOST()) {
            return "VK_ERROR_DEVICE_LOST";
        }
        return "VkResult " + code;
    }
}
