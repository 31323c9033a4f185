package io.gpusync.wgpu;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * wgpu-native's {@code wgpuDevicePoll}, loaded lazily by hand-declared FFM downcall (no generated bindings:
 * no wgpu-native package is served by the registries this project uses). Prototype, from wgpu-native's
 * {@code wgpu.h}: {@code WGPUBool wgpuDevicePoll(WGPUDevice device, WGPUBool wait,
 * WGPUSubmissionIndex const * submissionIndex)}, {@code WGPUBool} a 32-bit int, {@code WGPUSubmissionIndex} a
 * {@code uint64_t}; it returns whether every queue is empty.
 *
 * <p>The library is the one named by the system property {@value #LIBRARY_PROPERTY} (a path or a soname), else
 * {@value #DEFAULT_LIBRARY}. Absent → {@link SyncNotSupportedException} naming what was looked for. Thread-safe.
 */
final class WgpuNative {
    static final String LIBRARY_PROPERTY = "gpusync.wgpu.library";
    static final String DEFAULT_LIBRARY = "libwgpu_native.so";

    private WgpuNative() {
    }

    /** The library's name as configured. */
    static String library() {
        return System.getProperty(LIBRARY_PROPERTY, DEFAULT_LIBRARY);
    }

    /** @throws SyncNotSupportedException if the library or its {@code wgpuDevicePoll} cannot be found */
    static MethodHandle devicePoll() {
        return Loaded.poll();
    }

    private static final class Loaded {
        private static final Poll POLL = load();

        /** {@code wgpuDevicePoll}, or why it cannot be had. */
        private record Poll(MethodHandle handle, String unavailable) {
        }

        static MethodHandle poll() {
            if (POLL.handle() != null) {
                return POLL.handle();
            }
            throw new SyncNotSupportedException(BackendKind.WGPU, "wgpu-native cannot be loaded: " + POLL.unavailable()
                    + " (set -D" + LIBRARY_PROPERTY + " to the path of libwgpu_native.so)");
        }

        private static Poll load() {
            String name = library();
            try {
                SymbolLookup lookup = SymbolLookup.libraryLookup(name, Arena.global());
                MemorySegment fn = lookup.find("wgpuDevicePoll").orElse(null);
                if (fn == null) {
                    return new Poll(null, name + " has no symbol wgpuDevicePoll");
                }
                return new Poll(Linker.nativeLinker().downcallHandle(fn, FunctionDescriptor.of(ValueLayout.JAVA_INT,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.ADDRESS)), null);
            } catch (IllegalArgumentException | IllegalCallerException e) {
                return new Poll(null, name + " is not installed (" + e.getMessage() + ")");
            }
        }
    }
}
