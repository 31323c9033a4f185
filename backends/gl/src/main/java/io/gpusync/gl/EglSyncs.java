package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.GlBackend;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Mints points over {@code EGLSync} handles: fence syncs ({@code EGL_KHR_fence_sync}, {@code eglCreateSync})
 * and host-signalled reusable syncs ({@code EGL_KHR_reusable_sync}; see {@link EglReusableSync} to create
 * or adopt one). Stateless and thread-safe.
 *
 * <p><b>Which SyncPoint.</b> An EGL sync is the window-system-level twin of a {@code GLsync}: a binary,
 * value-less object signalled by the GL queue or the host. It is therefore a
 * {@link SyncPoint.OpenGLSync} with {@code glsync} = the {@code EGLSync} handle and
 * {@code platform = GlBackend.EGL}; its waiter tells the two apart (an EGL-sync point's waiter needs no GL
 * context and calls only EGL). Consumers that stage a GPU-side wait on such a point use
 * {@code eglWaitSync}, not {@code glWaitSync}.
 *
 * <p><b>Ownership.</b> {@link #adopt} takes fence syncs only. A reusable sync is signalled by the application
 * ({@code eglSignalSyncKHR}), and Mesa (22.3) still writes to the sync after that call has woken the waiters: if
 * gpusync owned it, the wait a signal ends could destroy it under the signal. So {@link #adopt} refuses a
 * reusable sync; {@link #borrow} takes it (the caller destroys it after its own signals), and
 * {@link EglReusableSync#adopt} hands it to gpusync together with an object whose claim covers raw signals.
 *
 * <p><b>Threading, blocking and cancellation.</b> Points and their waiters may be used from any thread. A
 * point's {@code await} blocks the calling thread in {@code eglClientWaitSyncKHR} (no GL context needed, no
 * spinning) in slices of at most 50 ms: an interrupt ends it within a slice
 * ({@link io.gpusync.SyncCancelledException}), and nothing but the sync or the timeout ends a slice sooner.
 * {@code isSignaled} is one {@code eglGetSyncAttribKHR}. The factories make a few EGL queries and never block.
 */
public final class EglSyncs {
    private EglSyncs() {
    }

    /**
     * A point that takes ownership of the fence sync {@code sync}: {@code eglDestroySyncKHR} runs exactly once,
     * when the point's waiter is closed or unreachable and no wait on it is in progress (possibly on the thread
     * whose wait or close dropped the last hold). If this throws, the sync stays the caller's.
     *
     * @throws SyncInvalidArgumentException     if {@code sync} is a reusable sync ({@code EGL_SYNC_REUSABLE_KHR}):
     *                                          use {@link #borrow} (the caller destroys it) or
     *                                          {@link EglReusableSync#adopt} instead
     * @throws io.gpusync.SyncBackendException if EGL rejects the handles (e.g. {@code EGL_BAD_PARAMETER} for
     *                                         a sync that does not exist on {@code display})
     */
    public static SyncPoint.OpenGLSync adopt(MemorySegment display, MemorySegment sync) {
        if (validate(display, sync) == Egl.EGL_SYNC_REUSABLE_KHR()) {
            throw new SyncInvalidArgumentException(BackendKind.OPENGL, "EglSyncs.adopt refuses the reusable EGLSync "
                    + EglNative.hex(sync) + ": the application signals it, and Mesa writes to the sync after "
                    + "eglSignalSyncKHR has woken the waiters, so a wait that the signal ends must not destroy it. "
                    + "Use EglReusableSync.adopt(display, sync) (gpusync destroys it once that object and every "
                    + "waiter are closed; signal it while the object is open) or EglSyncs.borrow(display, sync) "
                    + "(you destroy it after your last signal and once every waiter is closed)");
        }
        NativeAnchor anchor = NativeAnchor.adopt("EGLSync " + EglNative.hex(sync),
                new EglSyncWaiter.Destroy(display, sync));
        return new SyncPoint.OpenGLSync(sync, GlBackend.EGL, new EglSyncWaiter(display, sync, anchor));
    }

    /** {@link #adopt(MemorySegment, MemorySegment)} from raw handle values. */
    public static SyncPoint.OpenGLSync adopt(long display, long sync) {
        return adopt(MemorySegment.ofAddress(display), MemorySegment.ofAddress(sync));
    }

    /**
     * A point over {@code sync} (a fence or reusable sync), which the caller keeps alive while the point is in use
     * and destroys itself, after its own last {@code eglSignalSyncKHR} has returned and every waiter is closed.
     */
    public static SyncPoint.OpenGLSync borrow(MemorySegment display, MemorySegment sync) {
        validate(display, sync);
        return new SyncPoint.OpenGLSync(sync, GlBackend.EGL,
                new EglSyncWaiter(display, sync,
                        NativeAnchor.borrow(EglSyncs.class, "EGLSync " + EglNative.hex(sync))));
    }

    /** {@link #borrow(MemorySegment, MemorySegment)} from raw handle values. */
    public static SyncPoint.OpenGLSync borrow(long display, long sync) {
        return borrow(MemorySegment.ofAddress(display), MemorySegment.ofAddress(sync));
    }

    /** Checks both handles with EGL; returns the sync's {@code EGL_SYNC_TYPE_KHR}. */
    static int validate(MemorySegment display, MemorySegment sync) {
        Objects.requireNonNull(display, "display");
        Objects.requireNonNull(sync, "sync");
        EglNative.requireEgl();
        if (display.equals(Egl.EGL_NO_DISPLAY()) || sync.equals(Egl.EGL_NO_SYNC_KHR())) {
            throw new SyncInvalidArgumentException(BackendKind.OPENGL, "an EGL sync point needs an EGLDisplay and "
                    + "an EGLSync, got " + EglNative.hex(display) + ", " + EglNative.hex(sync));
        }
        return EglSyncWaiter.syncType(display, sync); // EGL validates both handles; throws its error code
    }
}
