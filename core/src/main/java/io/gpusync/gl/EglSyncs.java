package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.GlBackend;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.spi.NativeAnchor;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Mints points over {@code EGLSync} handles: fence syncs ({@code EGL_KHR_fence_sync}, {@code eglCreateSync})
 * and host-signalled reusable syncs ({@code EGL_KHR_reusable_sync}; see {@link EglReusableSync} to create
 * one). Stateless and thread-safe.
 *
 * <p><b>Which SyncPoint.</b> An EGL sync is the window-system-level twin of a {@code GLsync}: a binary,
 * value-less object signalled by the GL queue or the host. It is therefore a
 * {@link SyncPoint.OpenGLSync} with {@code glsync} = the {@code EGLSync} handle and
 * {@code platform = GlBackend.EGL}; its waiter tells the two apart (an EGL-sync point's waiter needs no GL
 * context and calls only EGL). Consumers that stage a GPU-side wait on such a point use
 * {@code eglWaitSync}, not {@code glWaitSync}.
 *
 * <p><b>Blocking and cancellation.</b> A point's {@code await} blocks in {@code eglClientWaitSyncKHR} on the
 * calling thread (no GL context needed, no spinning) and cannot be interrupted; wait in slices to cancel.
 * {@code isSignaled} is one {@code eglGetSyncAttribKHR}.
 */
public final class EglSyncs {
    private EglSyncs() {
    }

    /**
     * A point that takes ownership of {@code sync}: {@code eglDestroySyncKHR} runs exactly once, when the
     * point's waiter is closed or unreachable and no wait on it is in progress. A wait that a signal ends may
     * release the sync at once, on the waiting thread: whoever signals a reusable sync adopted here must keep a
     * waiter on it open until {@code eglSignalSyncKHR} has returned (Mesa 22.3 writes to the sync after waking
     * the waiters; a sync destroyed in between is a use-after-free in the driver).
     *
     * @throws io.gpusync.SyncBackendException if EGL rejects the handles (e.g. {@code EGL_BAD_PARAMETER} for
     *                                         a sync that does not exist on {@code display})
     */
    public static SyncPoint.OpenGLSync adopt(MemorySegment display, MemorySegment sync) {
        validate(display, sync);
        NativeAnchor anchor = NativeAnchor.adopt("EGLSync " + EglNative.hex(sync),
                new EglSyncWaiter.Destroy(display, sync));
        return new SyncPoint.OpenGLSync(sync, GlBackend.EGL, new EglSyncWaiter(display, sync, anchor));
    }

    /** {@link #adopt(MemorySegment, MemorySegment)} from raw handle values. */
    public static SyncPoint.OpenGLSync adopt(long display, long sync) {
        return adopt(MemorySegment.ofAddress(display), MemorySegment.ofAddress(sync));
    }

    /** A point over {@code sync}, which the caller keeps alive while the point is in use and destroys itself. */
    public static SyncPoint.OpenGLSync borrow(MemorySegment display, MemorySegment sync) {
        validate(display, sync);
        return new SyncPoint.OpenGLSync(sync, GlBackend.EGL,
                new EglSyncWaiter(display, sync, NativeAnchor.borrow("EGLSync " + EglNative.hex(sync))));
    }

    /** {@link #borrow(MemorySegment, MemorySegment)} from raw handle values. */
    public static SyncPoint.OpenGLSync borrow(long display, long sync) {
        return borrow(MemorySegment.ofAddress(display), MemorySegment.ofAddress(sync));
    }

    private static void validate(MemorySegment display, MemorySegment sync) {
        Objects.requireNonNull(display, "display");
        Objects.requireNonNull(sync, "sync");
        EglNative.requireEgl();
        if (display.equals(Egl.EGL_NO_DISPLAY()) || sync.equals(Egl.EGL_NO_SYNC_KHR())) {
            throw new SyncInvalidArgumentException(BackendKind.OPENGL, "an EGL sync point needs an EGLDisplay and "
                    + "an EGLSync, got " + EglNative.hex(display) + ", " + EglNative.hex(sync));
        }
        EglSyncWaiter.syncType(display, sync); // EGL validates both handles; throws its error code
    }
}
