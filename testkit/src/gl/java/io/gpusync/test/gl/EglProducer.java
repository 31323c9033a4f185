package io.gpusync.test.gl;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.bindings.egl.PFNEGLCREATESYNCKHRPROC;
import io.gpusync.bindings.gles.Gles;
import io.gpusync.gl.EglReusableSync;
import io.gpusync.gl.EglSyncs;
import io.gpusync.gl.GlShareGroup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.util.function.Supplier;

/**
 * A small owned GL producer for tests, demos and benchmarks: the Mesa surfaceless EGL display
 * ({@code eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA)}: no window system, runs on llvmpipe), an OpenGL ES 3
 * context on a {@code width × height} pbuffer, its {@link GlShareGroup}, and methods that issue real work followed
 * by a fence. It uses only {@code gpusync-gl}'s public API and the GL bindings.
 *
 * <p><b>Threading.</b> Thread-safe: every method makes the context current on the calling thread for its own
 * duration (an EGL context is current on one thread at a time, so calls are serialised by a lock) and restores the
 * thread's previous binding before returning. {@link #runCurrent} keeps it current while an action runs: a wait on
 * one of this producer's GL points inside it runs directly on the producer context, the only case where
 * {@code GL_SYNC_FLUSH_COMMANDS_BIT} is passed.
 *
 * <p><b>Blocking.</b> Nothing here waits for the GPU; {@link #fence} returns as soon as the work is submitted
 * ({@code glFlush}). Waiting is the returned point's job.
 *
 * <p><b>Lifetime.</b> {@link #close()} closes the share group, destroys the context and the pbuffer. It does
 * <em>not</em> {@code eglTerminate} the display: EGL displays are per-process singletons (another producer or
 * library may use the same one), and terminating one invalidates every object on it. Points minted here stay valid
 * after {@code close()} (their syncs keep the share group alive).
 */
public final class EglProducer implements AutoCloseable {
    private final MemorySegment display;
    private final MemorySegment surface;
    private final MemorySegment context;
    private final GlShareGroup shareGroup;
    private boolean closed;

    private EglProducer(MemorySegment display, MemorySegment surface, MemorySegment context) {
        this.display = display;
        this.surface = surface;
        this.context = context;
        this.shareGroup = GlShareGroup.of(display, context);
    }

    /** {@link #openSurfaceless(int, int)} with a 256 × 256 pbuffer. */
    public static EglProducer openSurfaceless() {
        return openSurfaceless(256, 256);
    }

    /**
     * Opens the surfaceless display (initialising it if needed) and creates a GLES 3 context on a pbuffer of
     * {@code width × height} pixels (larger pbuffers make each clear cost more GPU time).
     *
     * @throws SyncNotSupportedException if libEGL/libGLESv2, the surfaceless platform, or a GLES 3 config is missing
     */
    public static EglProducer openSurfaceless(int width, int height) {
        requireLibrary("libEGL.so.1");
        requireLibrary("libGLESv2.so.2");
        MemorySegment clientExt = Egl.eglQueryString(Egl.EGL_NO_DISPLAY(), Egl.EGL_EXTENSIONS());
        if (clientExt.equals(MemorySegment.NULL)
                || !io.gpusync.internal.CStrings.read(clientExt).contains("EGL_MESA_platform_surfaceless")) {
            throw new SyncNotSupportedException(BackendKind.OPENGL,
                    "EGL has no EGL_MESA_platform_surfaceless client extension (Mesa's libegl-mesa0 not installed?)");
        }
        MemorySegment display = Egl.eglGetPlatformDisplay(Egl.EGL_PLATFORM_SURFACELESS_MESA(),
                Egl.EGL_DEFAULT_DISPLAY(), MemorySegment.NULL);
        if (display.equals(Egl.EGL_NO_DISPLAY())) {
            throw new SyncNotSupportedException(BackendKind.OPENGL, "eglGetPlatformDisplay(surfaceless) failed: "
                    + eglError());
        }
        try (Arena arena = Arena.ofConfined()) {
            if (Egl.eglInitialize(display, MemorySegment.NULL, MemorySegment.NULL) == Egl.EGL_FALSE()) {
                throw new SyncNotSupportedException(BackendKind.OPENGL, "eglInitialize(surfaceless) failed: "
                        + eglError());
            }
            MemorySegment configAttribs = arena.allocateFrom(ValueLayout.JAVA_INT,
                    Egl.EGL_RENDERABLE_TYPE(), Egl.EGL_OPENGL_ES3_BIT(),
                    Egl.EGL_SURFACE_TYPE(), Egl.EGL_PBUFFER_BIT(),
                    Egl.EGL_NONE());
            MemorySegment configs = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment n = arena.allocate(ValueLayout.JAVA_INT);
            if (Egl.eglChooseConfig(display, configAttribs, configs, 1, n) == Egl.EGL_FALSE()
                    || n.get(ValueLayout.JAVA_INT, 0) < 1) {
                throw new SyncNotSupportedException(BackendKind.OPENGL,
                        "no EGL config with OpenGL ES 3 and pbuffers on the surfaceless display");
            }
            MemorySegment config = configs.get(ValueLayout.ADDRESS, 0);
            MemorySegment surface = Egl.eglCreatePbufferSurface(display, config, arena.allocateFrom(
                    ValueLayout.JAVA_INT, Egl.EGL_WIDTH(), width, Egl.EGL_HEIGHT(), height, Egl.EGL_NONE()));
            if (surface.equals(Egl.EGL_NO_SURFACE())) {
                throw eglFailure("eglCreatePbufferSurface(" + width + "x" + height + ")");
            }
            int previousApi = Egl.eglQueryAPI();
            Egl.eglBindAPI(Egl.EGL_OPENGL_ES_API());
            MemorySegment context;
            try {
                context = Egl.eglCreateContext(display, config, Egl.EGL_NO_CONTEXT(), arena.allocateFrom(
                        ValueLayout.JAVA_INT, Egl.EGL_CONTEXT_MAJOR_VERSION(), 3, Egl.EGL_NONE()));
            } finally {
                Egl.eglBindAPI(previousApi);
            }
            if (context.equals(Egl.EGL_NO_CONTEXT())) {
                IllegalStateException e = eglFailure("eglCreateContext(OpenGL ES 3)");
                Egl.eglDestroySurface(display, surface);
                throw e;
            }
            return new EglProducer(display, surface, context);
        }
    }

    /** The {@code EGLDisplay} (surfaceless platform). */
    public MemorySegment display() {
        return display;
    }

    /** The producer {@code EGLContext} (OpenGL ES 3). */
    public MemorySegment context() {
        return context;
    }

    /** The share group whose wait contexts wait on this producer's {@code GLsync}s. */
    public GlShareGroup shareGroup() {
        return shareGroup;
    }

    /**
     * Submits {@code clears} full-surface clears (each followed by {@code glFlush}, so each is real GPU work), then
     * {@code glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE)} and {@code glFlush}: the returned point owns the
     * {@code GLsync} and is signalled when the GL queue has executed the clears.
     */
    public SyncPoint.OpenGLSync fence(int clears) {
        MemorySegment sync = withCurrent(() -> {
            submitClears(clears);
            MemorySegment s = Gles.glFenceSync(Gles.GL_SYNC_GPU_COMMANDS_COMPLETE(), 0);
            if (s.equals(MemorySegment.NULL)) {
                throw glFailure("glFenceSync");
            }
            Gles.glFlush();
            return s;
        });
        return shareGroup.adoptGlSync(sync);
    }

    /**
     * Like {@link #fence(int)} but the fence is an EGL fence sync ({@code eglCreateSyncKHR(EGL_SYNC_FENCE_KHR)}):
     * the returned point's waits need no GL context at all.
     */
    public SyncPoint.OpenGLSync eglFence(int clears) {
        MemorySegment fn;
        try (Arena arena = Arena.ofConfined()) {
            fn = Egl.eglGetProcAddress(arena.allocateFrom("eglCreateSyncKHR"));
        }
        if (fn.equals(MemorySegment.NULL)) {
            throw new SyncNotSupportedException(BackendKind.OPENGL, "this EGL does not provide eglCreateSyncKHR");
        }
        MemorySegment sync = withCurrent(() -> {
            submitClears(clears);
            MemorySegment s;
            try (Arena arena = Arena.ofConfined()) {
                s = PFNEGLCREATESYNCKHRPROC.invoke(fn, display, Egl.EGL_SYNC_FENCE_KHR(),
                        arena.allocateFrom(ValueLayout.JAVA_INT, Egl.EGL_NONE()));
            }
            if (s.equals(Egl.EGL_NO_SYNC_KHR())) {
                throw eglFailure("eglCreateSyncKHR(EGL_SYNC_FENCE_KHR)");
            }
            Gles.glFlush();
            return s;
        });
        return EglSyncs.adopt(display, sync);
    }

    /** A new host-signalled sync on this producer's display. */
    public EglReusableSync reusableSync() {
        return EglReusableSync.create(display);
    }

    /** Runs {@code action} with the producer context current on the calling thread (then restores). */
    public void runCurrent(Runnable action) {
        withCurrent(() -> {
            action.run();
            return null;
        });
    }

    private void submitClears(int clears) {
        for (int i = 0; i < clears; i++) {
            Gles.glClearColor((i & 1), 0.5f, ((i >> 1) & 1), 1f);
            Gles.glClear(Gles.GL_COLOR_BUFFER_BIT());
            Gles.glFlush();
        }
        int err = Gles.glGetError();
        if (err != Gles.GL_NO_ERROR()) {
            throw new IllegalStateException("glClear failed: GL error 0x" + Integer.toHexString(err));
        }
    }

    private synchronized <T> T withCurrent(Supplier<T> action) {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
        int previousApi = Egl.eglQueryAPI();
        if (previousApi != Egl.EGL_OPENGL_ES_API()) {
            Egl.eglBindAPI(Egl.EGL_OPENGL_ES_API());
        }
        try {
            MemorySegment prevContext = Egl.eglGetCurrentContext();
            if (prevContext.equals(context)) {
                return action.get();
            }
            MemorySegment prevDisplay = Egl.eglGetCurrentDisplay();
            MemorySegment prevDraw = Egl.eglGetCurrentSurface(Egl.EGL_DRAW());
            MemorySegment prevRead = Egl.eglGetCurrentSurface(Egl.EGL_READ());
            if (Egl.eglMakeCurrent(display, surface, surface, context) == Egl.EGL_FALSE()) {
                throw eglFailure("eglMakeCurrent(producer context " + hex(context) + ")");
            }
            try {
                return action.get();
            } finally {
                if (prevContext.equals(Egl.EGL_NO_CONTEXT())) {
                    Egl.eglMakeCurrent(display, Egl.EGL_NO_SURFACE(), Egl.EGL_NO_SURFACE(), Egl.EGL_NO_CONTEXT());
                } else {
                    Egl.eglMakeCurrent(prevDisplay, prevDraw, prevRead, prevContext);
                }
            }
        } finally {
            if (previousApi != Egl.EGL_OPENGL_ES_API()) {
                Egl.eglBindAPI(previousApi);
            }
        }
    }

    /** Closes the share group and destroys the context and pbuffer (not the display). Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        shareGroup.close();
        Egl.eglDestroyContext(display, context);
        Egl.eglDestroySurface(display, surface);
    }

    @Override
    public String toString() {
        return "EglProducer[display " + hex(display) + ", context " + hex(context) + "]";
    }

    private static void requireLibrary(String name) {
        try {
            SymbolLookup.libraryLookup(name, Arena.global());
        } catch (IllegalArgumentException absent) {
            throw new SyncNotSupportedException(BackendKind.OPENGL, name + " is not installed");
        }
    }

    private static String eglError() {
        return "EGL error 0x" + Integer.toHexString(Egl.eglGetError());
    }

    private static IllegalStateException eglFailure(String what) {
        return new IllegalStateException(what + " failed: " + eglError());
    }

    private static IllegalStateException glFailure(String what) {
        return new IllegalStateException(what + " failed: GL error 0x" + Integer.toHexString(Gles.glGetError()));
    }

    private static String hex(MemorySegment handle) {
        return "0x" + Long.toHexString(handle.address());
    }
}
