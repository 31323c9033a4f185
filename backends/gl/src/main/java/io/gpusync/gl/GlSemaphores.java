package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.VulkanSemaphoreKind;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.bindings.gles.Gles;
import io.gpusync.internal.CStrings;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * {@link SyncPoint.OpenGL} points over OpenGL semaphore objects ({@code GL_EXT_semaphore}) imported from an
 * opaque fd that Vulkan exported ({@code GL_EXT_semaphore_fd}; a timeline semaphore also needs
 * {@code GL_NV_timeline_semaphore}).
 *
 * <p><b>How the CPU waits (the approach chosen).</b> GL has no host wait on a semaphore. In a context of the
 * producer's {@linkplain GlShareGroup share group}, gpusync queues {@code glWaitSemaphoreEXT} (at the value, for
 * a timeline) followed by {@code glFenceSync}, flushes, and awaits that {@code GLsync} with the existing
 * {@link GlSyncWaiter} (a blocking waiter: {@code glClientWaitSync} in slices on a pooled shared context). The
 * point is signalled when GL has passed the semaphore wait. The alternative — waiting on the Vulkan side
 * ({@code vkWaitSemaphores} on the exporting semaphore) — needs no GL at all and is what a Vulkan producer's
 * own point already offers; this one proves the GL import path. A binary semaphore wait consumes the signal
 * (one point per signal); a timeline point can be {@linkplain SyncPoint#withValue rebound}, which queues a new
 * wait + fence at the new value.
 *
 * <p><b>Where it works.</b> The extensions are checked in the group's context; a driver that lacks any of
 * them makes the factory throw {@link SyncNotSupportedException} naming the missing ones (Mesa 22.3's llvmpipe
 * lacks {@code GL_EXT_semaphore_fd}; NVIDIA's EGL has all three). Entry points come through
 * {@code eglGetProcAddress} and hand-declared FFM descriptors.
 *
 * <p><b>Lifetime.</b> On success the fd belongs to the GL driver (on failure it is still the caller's). The
 * semaphore object is deleted ({@code glDeleteSemaphoresEXT}, on the housekeeping thread in a context of the
 * group) once the point's waiter and every waiter rebound from it are closed and no wait is in progress.
 * Thread-safe.
 */
public final class GlSemaphores {
    static final String EXT_SEMAPHORE = "GL_EXT_semaphore";
    static final String EXT_SEMAPHORE_FD = "GL_EXT_semaphore_fd";
    static final String NV_TIMELINE = "GL_NV_timeline_semaphore";
    private static final int GL_NUM_EXTENSIONS = 0x821D;
    private static final int GL_HANDLE_TYPE_OPAQUE_FD_EXT = 0x9586;
    private static final int GL_SEMAPHORE_TYPE_NV = 0x95B3;
    private static final int GL_SEMAPHORE_TYPE_TIMELINE_NV = 0x95B5;
    private static final int GL_TIMELINE_SEMAPHORE_VALUE_NV = 0x9595;
    private static final int GL_SYNC_GPU_COMMANDS_COMPLETE = 0x9117;

    private GlSemaphores() {
    }

    /**
     * Imports {@code fd} (an opaque fd of a Vulkan semaphore of {@code kind}) into {@code group}'s share group
     * and returns a point signalled once the semaphore is signalled (a timeline: reaches {@code value},
     * unsigned; ignored for a binary one).
     *
     * @throws SyncNotSupportedException    naming the missing extensions when the GL lacks them
     * @throws SyncInvalidArgumentException for a negative fd
     */
    public static SyncPoint.OpenGL importFd(GlShareGroup group, int fd, VulkanSemaphoreKind kind, long value) {
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(kind, "kind");
        if (fd < 0) {
            throw new SyncInvalidArgumentException(BackendKind.OPENGL, "importFd needs a valid fd, got " + fd);
        }
        boolean timeline = kind == VulkanSemaphoreKind.TIMELINE;
        return group.duringWait(() -> EglThreads.run(() -> {
            int semaphore;
            try (ShareContexts.Binding ignored = group.contexts().bind(); Arena a = Arena.ofConfined()) {
                requireExtensions(timeline);
                for (int i = 0; i < 8 && Gles.glGetError() != 0; i++) {
                    // an error an earlier call left in this pooled context is not this import's
                }
                MemorySegment out = a.allocate(JAVA_INT);
                // a name from glGenSemaphoresEXT is no object yet, and the NV type parameter can only be set on an
                // object (NVIDIA: GL_INVALID_VALUE): a timeline is made by glCreateSemaphoresNV
                Fns.call(timeline ? Fns.CREATE_NV : Fns.GEN, 1, out);
                semaphore = out.get(JAVA_INT, 0);
                checkGl(a, semaphore, timeline ? "glCreateSemaphoresNV" : "glGenSemaphoresEXT", kind, fd);
                if (timeline) {
                    Fns.call(Fns.PARAM_IV_NV, semaphore, GL_SEMAPHORE_TYPE_NV,
                            a.allocateFrom(JAVA_INT, GL_SEMAPHORE_TYPE_TIMELINE_NV));
                    checkGl(a, semaphore, "glSemaphoreParameterivNV(GL_SEMAPHORE_TYPE_TIMELINE_NV)", kind, fd);
                }
                Fns.call(Fns.IMPORT_FD, semaphore, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd);
                checkGl(a, semaphore, "glImportSemaphoreFdEXT", kind, fd);
            }
            SemaphoreObject object = new SemaphoreObject(group, semaphore);
            OptionalLong v = timeline ? OptionalLong.of(value) : OptionalLong.empty();
            SyncWaiter waiter;
            try {
                waiter = object.waiterAt(v);
            } catch (RuntimeException e) {
                object.anchor.claim(object).close(); // deletes the semaphore object
                throw e;
            }
            return new SyncPoint.OpenGL(semaphore, v, group.context(), waiter);
        }));
    }

    /** Throws, deleting {@code semaphore}, if the last GL call ({@code step}) raised an error. */
    private static void checkGl(Arena a, int semaphore, String step, VulkanSemaphoreKind kind, int fd) {
        int error = Gles.glGetError();
        if (error != 0) {
            if (semaphore != 0) {
                Fns.call(Fns.DELETE, 1, a.allocateFrom(JAVA_INT, semaphore));
            }
            throw new io.gpusync.SyncBackendException(io.gpusync.ErrorKind.CONFIGURATION, BackendKind.OPENGL,
                    error, EglNative.glErrorName(error), step + " failed importing fd " + fd + " (" + kind + ")");
        }
    }

    /** The extensions missing from the current context, or an exception naming them. */
    static void requireExtensions(boolean timeline) {
        List<String> missing = missingExtensions(timeline);
        if (!missing.isEmpty()) {
            MemorySegment renderer = Gles.glGetString(0x1F01); // GL_RENDERER
            String name = renderer.equals(MemorySegment.NULL) ? "?" : CStrings.read(renderer);
            throw new SyncNotSupportedException(BackendKind.OPENGL, "this OpenGL (" + name + ") lacks "
                    + String.join(" and ", missing) + ": it cannot import a Vulkan semaphore fd");
        }
    }

    /** The needed extensions the current context does not list. */
    static List<String> missingExtensions(boolean timeline) {
        List<String> present = new ArrayList<>();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment n = a.allocate(JAVA_INT);
            Gles.glGetIntegerv(GL_NUM_EXTENSIONS, n);
            for (int i = 0; i < n.get(JAVA_INT, 0); i++) {
                MemorySegment s = Fns.getStringi(i);
                if (!s.equals(MemorySegment.NULL)) {
                    present.add(CStrings.read(s));
                }
            }
        }
        List<String> missing = new ArrayList<>();
        for (String ext : timeline ? List.of(EXT_SEMAPHORE, EXT_SEMAPHORE_FD, NV_TIMELINE)
                : List.of(EXT_SEMAPHORE, EXT_SEMAPHORE_FD)) {
            if (!present.contains(ext)) {
                missing.add(ext);
            }
        }
        return missing;
    }

    /**
     * One imported semaphore object, deleted once every waiter over it is closed. It holds the group's contexts
     * until it is deleted: its deletion and its rebinds run in one of them, also after the group was closed.
     */
    static final class SemaphoreObject {
        private final GlShareGroup group;
        private final int semaphore;
        final io.gpusync.kit.NativeAnchor anchor;

        SemaphoreObject(GlShareGroup group, int semaphore) {
            this.group = group;
            this.semaphore = semaphore;
            ShareContexts contexts = group.contexts();
            group.hold(); // dropped after the deletion below
            this.anchor = io.gpusync.kit.NativeAnchor.adoptBlocking("GL semaphore " + semaphore, () -> {
                try {
                    contexts.runBound(() -> {
                        try (Arena a = Arena.ofConfined()) {
                            Fns.call(Fns.DELETE, 1, a.allocateFrom(JAVA_INT, semaphore));
                        }
                    });
                } finally {
                    group.releaseHold();
                }
            });
        }

        /** Queues the wait (at {@code value}) and a fence in a context of the group; the waiter of that fence. */
        SyncWaiter waiterAt(OptionalLong value) {
            MemorySegment sync = group.contexts().callBound(b -> queueWaitAndFence(value));
            return new GlSemaphoreWaiter(this, value, group.adoptGlSync(sync).waiter());
        }

        /** With a context of the group bound. */
        private MemorySegment queueWaitAndFence(OptionalLong value) {
            try (Arena a = Arena.ofConfined()) {
                if (value.isPresent()) {
                    Fns.call(Fns.PARAM_UI64, semaphore, GL_TIMELINE_SEMAPHORE_VALUE_NV,
                            a.allocateFrom(ValueLayout.JAVA_LONG, value.getAsLong()));
                }
            }
            Fns.call(Fns.WAIT, semaphore, 0, MemorySegment.NULL, 0, MemorySegment.NULL, MemorySegment.NULL);
            MemorySegment sync = Gles.glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
            Gles.glFlush();
            if (sync.equals(MemorySegment.NULL) || Gles.glGetError() != 0) {
                throw EglNative.glFailure("glWaitSemaphoreEXT + glFenceSync on GL semaphore " + semaphore);
            }
            return sync;
        }
    }

    /**
     * The waiter of a GL semaphore point: the {@link GlSyncWaiter} of the fence queued after the semaphore
     * wait, plus a hold on the semaphore object (see {@link GlSemaphores}). A {@link io.gpusync.spi.BlockingWaiter}
     * like the fence's.
     */
    private static final class GlSemaphoreWaiter implements io.gpusync.spi.BlockingWaiter {
        private final SemaphoreObject object;
        private final OptionalLong value;
        private final io.gpusync.kit.NativeAnchor.Claim claim;
        private final SyncWaiter fence;

        GlSemaphoreWaiter(SemaphoreObject object, OptionalLong value, SyncWaiter fence) {
            this.object = object;
            this.value = value;
            this.claim = object.anchor.claim(this);
            this.fence = fence;
        }

        @Override
        public void await(java.time.Duration timeout) {
            claim.run(() -> fence.await(timeout));
        }

        @Override
        public java.util.concurrent.Executor waitThreads() {
            return EglThreads.lender();
        }

        @Override
        public boolean isSignaled() {
            return claim.call(fence::isSignaled);
        }

        @Override
        public BackendKind backend() {
            return BackendKind.OPENGL;
        }

        @Override
        public java.util.Optional<SyncWaiter> rebindToValue(long newValue) {
            if (value.isEmpty()) {
                return java.util.Optional.empty();
            }
            return java.util.Optional.of(claim.call(() -> object.waiterAt(OptionalLong.of(newValue))));
        }

        @Override
        public java.util.concurrent.CompletionStage<Void> whenReleased() {
            return claim.anchor().whenReleased();
        }

        @Override
        public void close() {
            fence.close();
            claim.close();
        }

        @Override
        public String toString() {
            return "GlSemaphoreWaiter[GL semaphore " + object.semaphore
                    + value.stream().mapToObj(v -> " at " + Long.toUnsignedString(v)).findFirst().orElse("")
                    + " via " + fence + "]";
        }
    }

    /** The extension entry points, resolved once through {@code eglGetProcAddress}. */
    private static final class Fns {
        static final MethodHandle GEN = bind("glGenSemaphoresEXT", FunctionDescriptor.ofVoid(JAVA_INT, ADDRESS));
        static final MethodHandle CREATE_NV = bind("glCreateSemaphoresNV", FunctionDescriptor.ofVoid(JAVA_INT, ADDRESS));
        static final MethodHandle DELETE = bind("glDeleteSemaphoresEXT", FunctionDescriptor.ofVoid(JAVA_INT, ADDRESS));
        static final MethodHandle IMPORT_FD = bind("glImportSemaphoreFdEXT",
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, JAVA_INT));
        static final MethodHandle PARAM_UI64 = bind("glSemaphoreParameterui64vEXT",
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, ADDRESS));
        static final MethodHandle PARAM_IV_NV = bind("glSemaphoreParameterivNV",
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, ADDRESS));
        // void glWaitSemaphoreEXT(GLuint, GLuint numBuffers, const GLuint*, GLuint numTextures, const GLuint*, const GLenum*)
        static final MethodHandle WAIT = bind("glWaitSemaphoreEXT",
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
        static final MethodHandle GET_STRINGI = bind("glGetStringi",
                FunctionDescriptor.of(ADDRESS, JAVA_INT, JAVA_INT));

        private static MethodHandle bind(String name, FunctionDescriptor descriptor) {
            MemorySegment fn;
            try (Arena arena = Arena.ofConfined()) {
                fn = Egl.eglGetProcAddress(arena.allocateFrom(name));
            }
            return fn.equals(MemorySegment.NULL) ? null : Linker.nativeLinker().downcallHandle(fn, descriptor);
        }

        static MemorySegment getStringi(int index) {
            if (GET_STRINGI == null) {
                throw new SyncNotSupportedException(BackendKind.OPENGL, "this EGL does not provide glGetStringi");
            }
            try {
                return (MemorySegment) GET_STRINGI.invokeExact(0x1F03 /* GL_EXTENSIONS */, index);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }

        static void call(MethodHandle fn, Object... args) {
            if (fn == null) {
                throw new SyncNotSupportedException(BackendKind.OPENGL, "eglGetProcAddress returned NULL for a "
                        + EXT_SEMAPHORE + " entry point");
            }
            try {
                fn.invokeWithArguments(args);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
    }
}
