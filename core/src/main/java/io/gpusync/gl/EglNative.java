package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.bindings.gles.Gles;
import io.gpusync.internal.NativeLibraries;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.HashMap;
import java.util.Map;

/**
 * Everything the GL backend calls beyond the generated {@code Egl}/{@code Gles} header classes: the library
 * guard, the {@code EGL_KHR_*_sync} entry points (through {@code eglGetProcAddress}), a few core EGL
 * functions and constants the generated binding lacks (hand-written downcalls, see below), per-thread
 * scratch memory, and the EGL/GL error tables.
 *
 * <p>Missing from {@code io.gpusync.bindings.egl} (worked around here, not edited there):
 * {@code eglGetCurrentSurface}, {@code eglQueryContext}, {@code eglQueryAPI}, {@code eglCreatePbufferSurface},
 * {@code eglDestroySurface}; constants {@code EGL_WIDTH/HEIGHT/CONFIG_ID/CONTEXT_CLIENT_TYPE/DRAW/READ}.
 * Missing from {@code io.gpusync.bindings.gles}: {@code GL_CONTEXT_LOST}.
 */
final class EglNative {
    static final int EGL_CONFIG_ID = 0x3028;
    static final int EGL_HEIGHT = 0x3056;
    static final int EGL_WIDTH = 0x3057;
    static final int EGL_DRAW = 0x3059;
    static final int EGL_READ = 0x305A;
    static final int EGL_CONTEXT_CLIENT_TYPE = 0x3097;
    /** GLES 3.2 / GL 4.5 {@code GL_CONTEXT_LOST}. */
    static final int GL_CONTEXT_LOST = 0x0507;

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

    // ---------------------------------------------------------------- hand-written core EGL downcalls

    private static final class Core {
        static final SymbolLookup LIB = SymbolLookup.libraryLookup("libEGL.so.1", Arena.global());
        static final MethodHandle GET_CURRENT_SURFACE = handle("eglGetCurrentSurface",
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        static final MethodHandle QUERY_CONTEXT = handle("eglQueryContext",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
        static final MethodHandle QUERY_API = handle("eglQueryAPI", FunctionDescriptor.of(ValueLayout.JAVA_INT));
        static final MethodHandle CREATE_PBUFFER = handle("eglCreatePbufferSurface",
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS));
        static final MethodHandle DESTROY_SURFACE = handle("eglDestroySurface",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));

        private static MethodHandle handle(String name, FunctionDescriptor d) {
            return Linker.nativeLinker().downcallHandle(LIB.findOrThrow(name), d);
        }
    }

    static MemorySegment eglGetCurrentSurface(int readdraw) {
        try {
            return (MemorySegment) Core.GET_CURRENT_SURFACE.invokeExact(readdraw);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code eglQueryContext} of an {@code EGLint} attribute; throws on {@code EGL_FALSE}. */
    static int eglQueryContext(MemorySegment dpy, MemorySegment ctx, int attribute, String what) {
        MemorySegment out = Scratch.get().word;
        out.set(ValueLayout.JAVA_INT, 0, 0);
        int ok;
        try {
            ok = (int) Core.QUERY_CONTEXT.invokeExact(dpy, ctx, attribute, out);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (ok == Egl.EGL_FALSE()) {
            throw eglFailure("eglQueryContext(" + what + ") on context " + hex(ctx));
        }
        return out.get(ValueLayout.JAVA_INT, 0);
    }

    static int eglQueryAPI() {
        try {
            return (int) Core.QUERY_API.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static MemorySegment eglCreatePbufferSurface(MemorySegment dpy, MemorySegment config, MemorySegment attribs) {
        try {
            return (MemorySegment) Core.CREATE_PBUFFER.invokeExact(dpy, config, attribs);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int eglDestroySurface(MemorySegment dpy, MemorySegment surface) {
        try {
            return (int) Core.DESTROY_SURFACE.invokeExact(dpy, surface);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(t);
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
        String all = s.reinterpret(Integer.MAX_VALUE).getString(0);
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
        static final Map<Integer, String> NAMES = new HashMap<>();

        static {
            put(Egl.EGL_SUCCESS(), "EGL_SUCCESS");
            put(Egl.EGL_NOT_INITIALIZED(), "EGL_NOT_INITIALIZED");
            put(Egl.EGL_BAD_ACCESS(), "EGL_BAD_ACCESS");
            put(Egl.EGL_BAD_ALLOC(), "EGL_BAD_ALLOC");
            put(Egl.EGL_BAD_ATTRIBUTE(), "EGL_BAD_ATTRIBUTE");
            put(Egl.EGL_BAD_CONFIG(), "EGL_BAD_CONFIG");
            put(Egl.EGL_BAD_CONTEXT(), "EGL_BAD_CONTEXT");
            put(Egl.EGL_BAD_CURRENT_SURFACE(), "EGL_BAD_CURRENT_SURFACE");
            put(Egl.EGL_BAD_DISPLAY(), "EGL_BAD_DISPLAY");
            put(Egl.EGL_BAD_MATCH(), "EGL_BAD_MATCH");
            put(Egl.EGL_BAD_NATIVE_PIXMAP(), "EGL_BAD_NATIVE_PIXMAP");
            put(Egl.EGL_BAD_NATIVE_WINDOW(), "EGL_BAD_NATIVE_WINDOW");
            put(Egl.EGL_BAD_PARAMETER(), "EGL_BAD_PARAMETER");
            put(Egl.EGL_BAD_SURFACE(), "EGL_BAD_SURFACE");
            put(Egl.EGL_CONTEXT_LOST(), "EGL_CONTEXT_LOST");
            put(Egl.EGL_BAD_STREAM_KHR(), "EGL_BAD_STREAM_KHR");
            put(Egl.EGL_BAD_STATE_KHR(), "EGL_BAD_STATE_KHR");
            put(Egl.EGL_BAD_DEVICE_EXT(), "EGL_BAD_DEVICE_EXT");
            put(Egl.EGL_BAD_OUTPUT_LAYER_EXT(), "EGL_BAD_OUTPUT_LAYER_EXT");
            put(Egl.EGL_BAD_OUTPUT_PORT_EXT(), "EGL_BAD_OUTPUT_PORT_EXT");
        }

        private static void put(int code, String name) {
            NAMES.put(code, name);
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
                GL_CONTEXT_LOST, "GL_CONTEXT_LOST");
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
        if (code == GL_CONTEXT_LOST) {
            return new DeviceLostException(BackendKind.OPENGL, what + " failed: " + name);
        }
        ErrorKind kind = code == Gles.GL_OUT_OF_MEMORY() ? ErrorKind.RECOVERABLE : ErrorKind.CONFIGURATION;
        return new SyncBackendException(kind, BackendKind.OPENGL, code, name, what + " failed");
    }

    static String hex(MemorySegment handle) {
        return "0x" + Long.toHexString(handle.address());
    }
}
