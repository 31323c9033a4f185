package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.GlBackend;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.bindings.egl.PFNEGLCREATESYNCKHRPROC;
import io.gpusync.bindings.egl.PFNEGLSIGNALSYNCKHRPROC;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

/**
 * A host-signalled EGL sync ({@code EGL_KHR_reusable_sync}): a binary sync object that the CPU signals and
 * resets with {@code eglSignalSyncKHR}, waited on like any EGL sync through {@link #point()} (and GPU-side
 * with {@code eglWaitSync} by consumers that support it). {@link #create} makes a new, unsignalled one;
 * {@link #adopt} takes over one the application created.
 *
 * <p><b>Ownership and lifetime.</b> gpusync owns the sync: it is destroyed ({@code eglDestroySyncKHR}) exactly
 * once, after this object and the point's waiter have both been closed (or become unreachable) and no wait on
 * it is in progress — on the thread that dropped the last hold. The display stays the caller's. This object
 * holds its own claim on the sync, and {@link #signal()} holds one more for the whole {@code eglSignalSyncKHR}
 * call: Mesa (22.3) wakes the waiters with the display unlocked and still writes to the sync afterwards, so a
 * wait it ends must not be able to destroy the sync under it. The application may therefore also signal
 * {@link #handle()} with its own {@code eglSignalSyncKHR}, provided the call returns before it closes this object
 * (keep the object open and reachable across the call: try-with-resources does both). Closing waiters, from any
 * thread and at any time, never destroys the sync while this object is open. A {@link #signal()} after
 * {@link #close()} throws {@link IllegalStateException}.
 *
 * <p><b>Threading, blocking and cancellation.</b> Thread-safe. {@link #signal()}/{@link #unsignal()} never
 * block and wake every thread blocked in the point's {@code await}. A wait blocks its thread in
 * {@code eglClientWaitSyncKHR} in slices of at most 50 ms; an interrupt ends it within a slice
 * ({@link io.gpusync.SyncCancelledException}), otherwise only a signal or its timeout ends it.
 */
public final class EglReusableSync implements AutoCloseable {
    private final MemorySegment display;
    private final MemorySegment sync;
    private final SyncPoint.OpenGLSync point;
    private final NativeAnchor.Claim claim;

    private EglReusableSync(MemorySegment display, MemorySegment sync) {
        this.display = display;
        this.sync = sync;
        NativeAnchor anchor = NativeAnchor.adopt("reusable EGLSync " + EglNative.hex(sync),
                new EglSyncWaiter.Destroy(display, sync));
        this.point = new SyncPoint.OpenGLSync(sync, GlBackend.EGL, new EglSyncWaiter(display, sync, anchor));
        this.claim = anchor.claim(this);
    }

    /**
     * A new, unsignalled reusable sync on the initialised {@code display}.
     *
     * @throws SyncNotSupportedException        if libEGL is absent or the display lacks
     *                                          {@code EGL_KHR_reusable_sync}
     * @throws io.gpusync.SyncBackendException if {@code eglCreateSyncKHR} fails
     */
    public static EglReusableSync create(MemorySegment display) {
        Objects.requireNonNull(display, "display");
        EglNative.requireEgl();
        if (display.equals(Egl.EGL_NO_DISPLAY())) {
            throw new SyncInvalidArgumentException(BackendKind.OPENGL, "EGL_NO_DISPLAY");
        }
        return EglThreads.run(() -> createHere(display));
    }

    private static EglReusableSync createHere(MemorySegment display) {
        MemorySegment fn = EglNative.Khr.require(EglNative.Khr.CREATE_SYNC, "eglCreateSyncKHR");
        EglNative.Khr.require(EglNative.Khr.SIGNAL_SYNC, "eglSignalSyncKHR");
        if (!EglNative.hasExtension(display, "EGL_KHR_reusable_sync")) {
            throw new SyncNotSupportedException(BackendKind.OPENGL,
                    "EGL display " + EglNative.hex(display) + " does not support EGL_KHR_reusable_sync");
        }
        MemorySegment sync;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attribs = arena.allocateFrom(ValueLayout.JAVA_INT, Egl.EGL_NONE());
            sync = PFNEGLCREATESYNCKHRPROC.invoke(fn, display, Egl.EGL_SYNC_REUSABLE_KHR(), attribs);
        }
        if (sync.equals(Egl.EGL_NO_SYNC_KHR())) {
            throw EglNative.eglFailure("eglCreateSyncKHR(EGL_SYNC_REUSABLE_KHR)");
        }
        return new EglReusableSync(display, sync);
    }

    /** {@link #create(MemorySegment)} from a raw {@code EGLDisplay} value. */
    public static EglReusableSync create(long display) {
        return create(MemorySegment.ofAddress(display));
    }

    /**
     * Takes ownership of {@code sync}, a reusable sync ({@code EGL_SYNC_REUSABLE_KHR}) that the application
     * created on the initialised {@code display}; see the class comment for when it is destroyed, and for raw
     * {@code eglSignalSyncKHR} calls on it. If this throws, the sync stays the caller's.
     *
     * @throws SyncInvalidArgumentException     if {@code sync} is not a reusable sync (a fence sync goes to
     *                                          {@link EglSyncs#adopt}), or a handle is {@code EGL_NO_*}
     * @throws SyncNotSupportedException        if libEGL is absent or lacks {@code eglSignalSyncKHR}
     * @throws io.gpusync.SyncBackendException if EGL rejects the handles
     */
    public static EglReusableSync adopt(MemorySegment display, MemorySegment sync) {
        if (EglSyncs.validate(display, sync) != Egl.EGL_SYNC_REUSABLE_KHR()) {
            throw new SyncInvalidArgumentException(BackendKind.OPENGL, "EGLSync " + EglNative.hex(sync)
                    + " is not a reusable sync (EGL_SYNC_REUSABLE_KHR); adopt a fence sync with EglSyncs.adopt");
        }
        EglNative.Khr.require(EglNative.Khr.SIGNAL_SYNC, "eglSignalSyncKHR");
        return new EglReusableSync(display, sync);
    }

    /** {@link #adopt(MemorySegment, MemorySegment)} from raw {@code EGLDisplay} and {@code EGLSync} values. */
    public static EglReusableSync adopt(long display, long sync) {
        return adopt(MemorySegment.ofAddress(display), MemorySegment.ofAddress(sync));
    }

    /** The point that is signalled while this sync is; its {@code glsync} is the {@code EGLSync} handle. */
    public SyncPoint.OpenGLSync point() {
        return point;
    }

    /**
     * The {@code EGLSync} handle. It stays valid while this object is open; a raw {@code eglSignalSyncKHR} on it
     * must return before {@link #close()} is called.
     */
    public MemorySegment handle() {
        return sync;
    }

    /** Signals the sync ({@code eglSignalSyncKHR(EGL_SIGNALED_KHR)}), waking every waiter. */
    public void signal() {
        setStatus(Egl.EGL_SIGNALED_KHR(), "EGL_SIGNALED_KHR");
    }

    /** Resets the sync to unsignalled ({@code eglSignalSyncKHR(EGL_UNSIGNALED_KHR)}), for reuse. */
    public void unsignal() {
        setStatus(Egl.EGL_UNSIGNALED_KHR(), "EGL_UNSIGNALED_KHR");
    }

    private void setStatus(int mode, String name) {
        claim.run(() -> EglThreads.run(() -> {
            if (PFNEGLSIGNALSYNCKHRPROC.invoke(EglNative.Khr.SIGNAL_SYNC, display, sync, mode) == Egl.EGL_FALSE()) {
                throw EglNative.eglFailure("eglSignalSyncKHR(" + EglNative.hex(sync) + ", " + name + ")");
            }
        }));
    }

    /**
     * Drops this object's hold; the sync is destroyed once the point's waiter is closed too and no wait is in
     * progress. Call it after every signal of yours has returned. Idempotent; never blocks.
     */
    @Override
    public void close() {
        claim.close();
    }

    @Override
    public String toString() {
        return "EglReusableSync[" + EglNative.hex(sync) + "]";
    }
}
