package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.bindings.gles.Gles;
import io.gpusync.internal.CStrings;
import io.gpusync.internal.NativeLibraries;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.Map;

/**
 * Helpers of the GL backend around the generated {@code Egl}/{@code Gles} header classes: the library
 * guard, the {@code EGL_KHR_*_sync} entry points (extension functions, resolved through
 * {@code eglGetProcAddress}), a checked {@code eglQueryContext}, per-thread scratch memory, and the EGL/GL
 * error tables. All core EGL/GLES functions and constants come from {@code io.gpusync.bindings.egl.Egl} and
 * {@code io.gpusync.bindings.gles.Gles}; this class makes no downcalls of its own.
 */
final class EglNative {
    private EglNative() {
    }

    /** libEGL present (else {@link SyncNotSupportedException}); call before touching {@code Egl}. */
    static void requireEgl() {
        NativeLibraries.require(BackendKind.OPENGL, "libEGL.so.1");
    }

    /** libEGL and libGLESv2 present; call before touching {@code Gles}. */
    static void requireGl() {
        requireEgl();
        NativeLibraries.require(BackendKind.OPENGL, "libGLESv2.so.2");
    }

    // ---------------------------------------------------------------- core EGL helpers

    /** {@code eglQueryContext} of an {@code EGLint} attribute; throws on {@code EGL_FALSE}. */
    static int eglQueryContext(MemorySegment dpy, MemorySegment ctx, int attribute, String what) {
        MemorySegment out = Scratch.get().word;
        out.set(ValueLayout.JAVA_INT, 0, 0);
        if (Egl.eglQueryContext(dpy, ctx, attribute, out) == Egl.EGL_FALSE()) {
            throw eglFailure("eglQueryContext(" + what + ") on context " + hex(ctx));
        }
        return out.get(ValueLayout.JAVA_INT, 0);
    }

    // ---------------------------------------------------------------- EGL_KHR_fence_sync / reusable_sync

    /** The KHR sync entry points, resolved once through {@code eglGetProcAddress}; NULL when absent. */
    static final class Khr {
        static final MemorySegment CREATE_SYNC = proc("eglCreateSyncKHR");
        static final MemorySegment DESTROY_SYNC = proc("eglDestroySyncKHR");
        static final MemorySegment CLIENT_WAIT_SYNC = proc("eglClientWaitSyncKHR");
        static final MemorySegment GET_SYNC_ATTRIB = proc("eglGetSyncAttribKHR");
        static final MemorySegment SIGNAL_SYNC = proc("eglSignalSyncKHR");

        private Khr() {
        }

        private static MemorySegment proc(String name) {
            try (Arena arena = Arena.ofConfined()) {
                return Egl.eglGetProcAddress(arena.allocateFrom(name));
            }
        }

        /** {@code fn}, or {@link SyncNotSupportedException} naming it when the EGL lacks it. */
        static MemorySegment require(MemorySegment fn, String name) {
            if (fn.equals(MemorySegment.NULL)) {
                throw new SyncNotSupportedException(BackendKind.OPENGL,
                        "this EGL does not provide " + name + " (EGL_KHR_fence_sync / EGL_KHR_reusable_sync)");
            }
            return fn;
        }
    }

    /** Whether {@code display}'s extension string lists {@code extension}. */
    static boolean hasExtension(MemorySegment display, String extension) {
        MemorySegment s = Egl.eglQueryString(display, Egl.EGL_EXTENSIONS());
        if (s.equals(MemorySegment.NULL)) {
            return false;
        }
        String all = CStrings.read(s);
        return (" " + all + " ").contains(" " + extension + " ");
    }

    // ---------------------------------------------------------------- scratch

    /** Per-thread out-parameter memory (never escapes a call). */
    static final class Scratch {
        private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);
        final MemorySegment word;
        final MemorySegment word2;

        private Scratch() {
            Arena arena = Arena.ofAuto();
            word = arena.allocate(8, 8);
            word2 = arena.allocate(8, 8);
        }

        static Scratch get() {
            return SCRATCH.get();
        }
    }

    // ---------------------------------------------------------------- errors

    private static final class EglNames {
        static final Map<Integer, String> NAMES = table();

        private static Map<Integer, String> table() {
            Map<Integer, String> names = new HashMap<>();
            names.put(Egl.EGL_SUCCESS(), "EGL_SUCCESS");
            names.put(Egl.EGL_NOT_INITIALIZED(), "EGL_NOT_INITIALIZED");
            names.put(Egl.EGL_BAD_ACCESS(), "EGL_BAD_ACCESS");
            names.put(Egl.EGL_BAD_ALLOC(), "EGL_BAD_ALLOC");
            names.put(Egl.EGL_BAD_ATTRIBUTE(), "EGL_BAD_ATTRIBUTE");
            names.put(Egl.EGL_BAD_CONFIG(), "EGL_BAD_CONFIG");
            names.put(Egl.EGL_BAD_CONTEXT(), "EGL_BAD_CONTEXT");
            names.put(Egl.EGL_BAD_CURRENT_SURFACE(), "EGL_BAD_CURRENT_SURFACE");
            names.put(Egl.EGL_BAD_DISPLAY(), "EGL_BAD_DISPLAY");
            names.put(Egl.EGL_BAD_MATCH(), "EGL_BAD_MATCH");
            names.put(Egl.EGL_BAD_NATIVE_PIXMAP(), "EGL_BAD_NATIVE_PIXMAP");
            names.put(Egl.EGL_BAD_NATIVE_WINDOW(), "EGL_BAD_NATIVE_WINDOW");
            names.put(Egl.EGL_BAD_PARAMETER(), "EGL_BAD_PARAMETER");
            names.put(Egl.EGL_BAD_SURFACE(), "EGL_BAD_SURFACE");
            names.put(Egl.EGL_CONTEXT_LOST(), "EGL_CONTEXT_LOST");
            names.put(Egl.EGL_BAD_STREAM_KHR(), "EGL_BAD_STREAM_KHR");
            names.put(Egl.EGL_BAD_STATE_KHR(), "EGL_BAD_STATE_KHR");
            names.put(Egl.EGL_BAD_DEVICE_EXT(), "EGL_BAD_DEVICE_EXT");
            names.put(Egl.EGL_BAD_OUTPUT_LAYER_EXT(), "EGL_BAD_OUTPUT_LAYER_EXT");
            names.put(Egl.EGL_BAD_OUTPUT_PORT_EXT(), "EGL_BAD_OUTPUT_PORT_EXT");
            return Map.copyOf(names);
        }
    }

    private static final class GlNames {
        static final Map<Integer, String> NAMES = Map.of(
                Gles.GL_NO_ERROR(), "GL_NO_ERROR",
                Gles.GL_INVALID_ENUM(), "GL_INVALID_ENUM",
                Gles.GL_INVALID_VALUE(), "GL_INVALID_VALUE",
                Gles.GL_INVALID_OPERATION(), "GL_INVALID_OPERATION",
                Gles.GL_OUT_OF_MEMORY(), "GL_OUT_OF_MEMORY",
                Gles.GL_INVALID_FRAMEBUFFER_OPERATION(), "GL_INVALID_FRAMEBUFFER_OPERATION",
                Gles.GL_CONTEXT_LOST(), "GL_CONTEXT_LOST");
    }

    static String eglErrorName(int code) {
        return EglNames.NAMES.getOrDefault(code, "EGL error 0x" + Integer.toHexString(code));
    }

    static String glErrorName(int code) {
        return GlNames.NAMES.getOrDefault(code, "GL error 0x" + Integer.toHexString(code));
    }

    /** The exception for an EGL call that returned {@code EGL_FALSE}/{@code EGL_NO_*}: reads {@code eglGetError()}. */
    static SyncException eglFailure(String what) {
        return eglFailure(what, Egl.eglGetError());
    }

    static SyncException eglFailure(String what, int code) {
        String name = eglErrorName(code);
        if (code == Egl.EGL_CONTEXT_LOST()) {
            return new DeviceLostException(BackendKind.OPENGL, what + " failed: " + name
                    + " (power management event or GPU reset: the context must be recreated)");
        }
        ErrorKind kind = code == Egl.EGL_BAD_ALLOC() ? ErrorKind.RECOVERABLE : ErrorKind.CONFIGURATION;
        return new SyncBackendException(kind, BackendKind.OPENGL, code, name, what + " failed");
    }

    /** The exception for a GL call that failed: reads {@code glGetError()} (a context must be current). */
    static SyncException glFailure(String what) {
        int code = Gles.glGetError();
        String name = glErrorName(code);
        if (code == Gles.GL_CONTEXT_LOST()) {
            return new DeviceLostException(BackendKind.OPENGL, what + " failed: " + name);
        }
        ErrorKind kind = code == Gles.GL_OUT_OF_MEMORY() ? ErrorKind.RECOVERABLE : ErrorKind.CONFIGURATION;
        return new SyncBackendException(kind, BackendKind.OPENGL, code, name, what + " failed");
    }

    static String hex(MemorySegment handle) {
        return "0x" + Long.toHexString(handle.address());
    }
}
