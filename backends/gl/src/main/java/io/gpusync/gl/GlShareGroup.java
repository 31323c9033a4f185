package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.GlBackend;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.bindings.gles.Gles;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The waiting side of an EGL producer context's share group, and the factory of its
 * {@link SyncPoint.OpenGLSync} points over {@code GLsync} handles (as LWJGL users hold them: {@code long}s,
 * or {@link MemorySegment}s).
 *
 * <p>A {@code GLsync} can only be waited on by a thread that has a context of the fence's share group
 * current. A group therefore owns a pool of small surfaceless contexts created with the producer context as
 * {@code share_context}; each {@code await}/{@code isSignaled} on one of its points lends one to the calling
 * thread: {@code eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)}, the GL call, then the thread's
 * previous binding is restored (context, display, surfaces, bound API). Cost: one {@code eglMakeCurrent}
 * pair per call (a few µs on Mesa, see the backend's report); a thread that already has the producer
 * context current skips it. Concurrent waits from N threads use N contexts and never serialise on each
 * other; the pool grows to the peak number of concurrent waits and is reused LIFO.
 *
 * <p><b>Flushing.</b> The producer must {@code glFlush} after {@code glFenceSync} (or wait on the producer's
 * own thread): a client wait from another context cannot rely on {@code GL_SYNC_FLUSH_COMMANDS_BIT}, which
 * only flushes the waiter's own context.
 *
 * <p><b>Lifetime.</b> The display and producer context stay the caller's: the group never terminates the
 * display nor destroys the producer, and both must outlive it. {@link #close()} destroys the pooled
 * contexts once no wait is in progress and every <em>owned</em> sync adopted through it has been deleted;
 * waits on owned points keep working after {@code close()}; a wait on a borrowed point after
 * {@code close()} throws {@link IllegalStateException}. An unreachable group is closed by a cleaner.
 *
 * <p><b>Threading and blocking.</b> Thread-safe. Creating a group and its points never blocks on the GPU
 * (adoption validates the handle with {@code glIsSync}, which binds a pooled context for a moment).
 */
public final class GlShareGroup implements AutoCloseable {
    private final ShareContexts contexts;
    private final NativeAnchor.Claim userClaim;

    private GlShareGroup(ShareContexts contexts) {
        this.contexts = contexts;
        NativeAnchor anchor = NativeAnchor.adopt("wait contexts shared with EGL context "
                + EglNative.hex(contexts.producer), () -> EglThreads.run(contexts::destroy));
        this.userClaim = anchor.claim(this);
    }

    /**
     * The group of {@code context} (an {@code EGLContext} of an OpenGL or OpenGL ES API) on the initialised
     * {@code display}. Does not need the context to be current anywhere.
     *
     * @throws io.gpusync.SyncNotSupportedException if libEGL/libGLESv2 are absent or the context is not GL
     * @throws io.gpusync.SyncBackendException      if EGL rejects the handles ({@code EGL_BAD_DISPLAY},
     *                                              {@code EGL_BAD_CONTEXT}, …)
     */
    public static GlShareGroup of(MemorySegment display, MemorySegment context) {
        Objects.requireNonNull(display, "display");
        Objects.requireNonNull(context, "context");
        EglNative.requireGl();
        if (display.equals(Egl.EGL_NO_DISPLAY()) || context.equals(Egl.EGL_NO_CONTEXT())) {
            throw new SyncInvalidArgumentException(BackendKind.OPENGL,
                    "GlShareGroup needs an EGLDisplay and an EGLContext, got " + EglNative.hex(display) + ", "
                            + EglNative.hex(context));
        }
        return new GlShareGroup(EglThreads.run(() -> ShareContexts.of(display, context)));
    }

    /** {@link #of(MemorySegment, MemorySegment)} from raw handle values (e.g. LWJGL's {@code long}s). */
    public static GlShareGroup of(long display, long context) {
        return of(MemorySegment.ofAddress(display), MemorySegment.ofAddress(context));
    }

    /** The {@code EGLDisplay}. */
    public MemorySegment display() {
        return contexts.display;
    }

    /** The producer {@code EGLContext} whose share group this is. */
    public MemorySegment context() {
        return contexts.producer;
    }

    /**
     * A point over {@code glsync} that takes ownership of it: {@code glDeleteSync} runs (in a context of this
     * group, on gpusync's housekeeping thread) once the point's waiter is closed or unreachable and no wait
     * on it is in progress — exactly once.
     *
     * @throws SyncInvalidArgumentException if {@code glsync} is not a live sync object of this share group
     * @throws IllegalStateException        if this group is closed
     */
    public SyncPoint.OpenGLSync adoptGlSync(MemorySegment glsync) {
        requireSync(glsync);
        userClaim.enter(); // held until the sync is deleted
        NativeAnchor anchor;
        try {
            anchor = NativeAnchor.adoptBlocking("GLsync " + EglNative.hex(glsync),
                    new GlSyncWaiter.Delete(contexts, glsync, userClaim));
        } catch (RuntimeException e) {
            userClaim.exit();
            throw e;
        }
        return new SyncPoint.OpenGLSync(glsync, GlBackend.EGL, new GlSyncWaiter(this, glsync, anchor));
    }

    /** {@link #adoptGlSync(MemorySegment)} from a raw {@code GLsync} value. */
    public SyncPoint.OpenGLSync adoptGlSync(long glsync) {
        return adoptGlSync(MemorySegment.ofAddress(glsync));
    }

    /**
     * A point over {@code glsync}, which the caller keeps alive while the point is in use and deletes
     * itself; gpusync never deletes it.
     *
     * @throws SyncInvalidArgumentException if {@code glsync} is not a live sync object of this share group
     * @throws IllegalStateException        if this group is closed
     */
    public SyncPoint.OpenGLSync borrowGlSync(MemorySegment glsync) {
        requireSync(glsync);
        return new SyncPoint.OpenGLSync(glsync, GlBackend.EGL,
                new GlSyncWaiter(this, glsync,
                        NativeAnchor.borrow(GlShareGroup.class, "GLsync " + EglNative.hex(glsync))));
    }

    /** {@link #borrowGlSync(MemorySegment)} from a raw {@code GLsync} value. */
    public SyncPoint.OpenGLSync borrowGlSync(long glsync) {
        return borrowGlSync(MemorySegment.ofAddress(glsync));
    }

    private void requireSync(MemorySegment glsync) {
        Objects.requireNonNull(glsync, "glsync");
        duringWait(() -> contexts.callBound(b -> {
            if (glsync.equals(MemorySegment.NULL) || Gles.glIsSync(glsync) == 0) {
                throw new SyncInvalidArgumentException(BackendKind.OPENGL, EglNative.hex(glsync)
                        + " is not a live GLsync of the share group of context " + EglNative.hex(contexts.producer));
            }
            return null;
        }));
    }

    ShareContexts contexts() {
        return contexts;
    }

    /**
     * Keeps the group's contexts alive, also past {@link #close()}, until {@link #releaseHold()}: for a native
     * object of the group that is deleted in one of them.
     *
     * @throws IllegalStateException if this group is closed
     */
    void hold() {
        userClaim.enter();
    }

    /** Ends a {@link #hold()}. */
    void releaseHold() {
        userClaim.exit();
    }

    /** Number of wait contexts created so far: the peak number of concurrent waits on this group. */
    int waitContextsCreated() {
        return contexts.created();
    }

    /**
     * Runs {@code action} (a wait on a borrowed sync, a validation) with the group's contexts held alive.
     *
     * @throws IllegalStateException if this group is closed
     */
    <T> T duringWait(java.util.function.Supplier<T> action) {
        if (userClaim.isClosed()) {
            throw new IllegalStateException(this + " is closed");
        }
        return userClaim.call(action);
    }

    /**
     * Destroys the pooled wait contexts once no wait is in progress and every owned sync of this group has
     * been deleted. Idempotent; never blocks on the GPU.
     */
    @Override
    public void close() {
        userClaim.close();
    }

    @Override
    public String toString() {
        return "GlShareGroup[display " + EglNative.hex(contexts.display) + ", context "
                + EglNative.hex(contexts.producer) + "]";
    }
}
