package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.SyncTimeoutException;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.bindings.egl.PFNEGLCLIENTWAITSYNCKHRPROC;
import io.gpusync.bindings.egl.PFNEGLDESTROYSYNCKHRPROC;
import io.gpusync.bindings.egl.PFNEGLGETSYNCATTRIBKHRPROC;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.Deadline;
import io.gpusync.spi.NativeAnchor;
import io.gpusync.spi.Timeouts;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The waiter of an {@code EGLSync} (a fence sync of {@code EGL_KHR_fence_sync} or a host-signalled sync of
 * {@code EGL_KHR_reusable_sync}). Needs no GL context: {@link #await} blocks in
 * {@code eglClientWaitSyncKHR} ({@code EGL_FOREVER_KHR} for {@code FOREVER}; a finite wait that returns
 * {@code EGL_TIMEOUT_EXPIRED} before its deadline is repeated with the time left, so timeouts are never
 * early), {@link #isSignaled()} reads {@code eglGetSyncAttribKHR(EGL_SYNC_STATUS)}.
 *
 * <p>Waits pass no {@code EGL_SYNC_FLUSH_COMMANDS_BIT}: it would flush whatever context happens to be current
 * on the calling thread, not the fence's; the producer must have flushed after creating a fence sync.
 *
 * <p><b>Reusable syncs on Mesa</b> (checked on 22.3, and the code is unchanged in later releases): (1) a timed
 * wait that is woken by {@code eglSignalSyncKHR} returns {@code EGL_FALSE} without setting an error (the
 * driver returns {@code cnd_timedwait}'s {@code thrd_success}, which is 0); (2) the driver checks the status
 * outside the condition variable's mutex, so a signal that lands between the check and the wait is lost; and
 * its {@code EGL_FOREVER_KHR} path does not check the status at all. So reusable syncs are waited on in
 * slices of at most {@value #REUSABLE_SLICE_NANOS} ns (never {@code EGL_FOREVER_KHR}): a lost wake-up costs
 * at most one slice; and {@code EGL_FALSE} with {@code eglGetError() == EGL_SUCCESS} is taken as "woken",
 * confirmed by reading {@code EGL_SYNC_STATUS} (still unsignalled → keep waiting). Consequence: a signal
 * immediately followed by an unsignal may be missed by a waiter; treat reusable syncs as level-triggered.
 * Fence syncs use {@code EGL_FOREVER_KHR} and single timed waits.
 */
final class EglSyncWaiter implements BlockingWaiter {
    /** Owned EGLSyncs destroyed so far (tests check "exactly once"). */
    static final AtomicLong DESTROYED = new AtomicLong();
    /** The longest single wait on a reusable sync (bounds Mesa's lost wake-up). */
    static final long REUSABLE_SLICE_NANOS = 100_000_000L;

    private final MemorySegment display;
    private final MemorySegment sync;
    private final NativeAnchor.Claim claim;
    private final boolean owned;
    private final boolean reusable;

    EglSyncWaiter(MemorySegment display, MemorySegment sync, NativeAnchor anchor) {
        this.display = display;
        this.sync = sync;
        this.reusable = syncType(display, sync) == Egl.EGL_SYNC_REUSABLE_KHR();
        this.owned = anchor.isOwned();
        this.claim = anchor.claim(this);
    }

    /** The release action of an owned EGLSync. */
    record Destroy(MemorySegment display, MemorySegment sync) implements Runnable {
        @Override
        public void run() {
            MemorySegment fn = EglNative.Khr.require(EglNative.Khr.DESTROY_SYNC, "eglDestroySyncKHR");
            if (PFNEGLDESTROYSYNCKHRPROC.invoke(fn, display, sync) == Egl.EGL_FALSE()) {
                throw EglNative.eglFailure("eglDestroySyncKHR(" + EglNative.hex(sync) + ")");
            }
            DESTROYED.incrementAndGet();
        }
    }

    /** The sync's {@code EGL_SYNC_TYPE_KHR}; throws the EGL error for an invalid display or sync. */
    static int syncType(MemorySegment display, MemorySegment sync) {
        return attrib(display, sync, Egl.EGL_SYNC_TYPE_KHR(), "EGL_SYNC_TYPE_KHR");
    }

    private static int attrib(MemorySegment display, MemorySegment sync, int attribute, String name) {
        MemorySegment fn = EglNative.Khr.require(EglNative.Khr.GET_SYNC_ATTRIB, "eglGetSyncAttribKHR");
        MemorySegment value = EglNative.Scratch.get().word;
        value.set(ValueLayout.JAVA_INT, 0, 0);
        if (PFNEGLGETSYNCATTRIBKHRPROC.invoke(fn, display, sync, attribute, value) == Egl.EGL_FALSE()) {
            throw EglNative.eglFailure("eglGetSyncAttribKHR(EGLSync " + EglNative.hex(sync) + ", " + name + ")");
        }
        return value.get(ValueLayout.JAVA_INT, 0);
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        claim.enter();
        try {
            MemorySegment fn = EglNative.Khr.require(EglNative.Khr.CLIENT_WAIT_SYNC, "eglClientWaitSyncKHR");
            boolean forever = Timeouts.isForever(timeout);
            Deadline deadline = Deadline.after(timeout);
            while (true) {
                long ns;
                if (reusable) {
                    ns = Math.min(deadline.remainingNanos(), REUSABLE_SLICE_NANOS);
                } else {
                    ns = forever ? Egl.EGL_FOREVER_KHR() : deadline.remainingNanos();
                }
                int r = PFNEGLCLIENTWAITSYNCKHRPROC.invoke(fn, display, sync, 0, ns);
                if (r == Egl.EGL_CONDITION_SATISFIED_KHR()) {
                    return;
                }
                if (r == Egl.EGL_FALSE()) {
                    int error = Egl.eglGetError();
                    if (!(reusable && error == Egl.EGL_SUCCESS())) {
                        throw EglNative.eglFailure("eglClientWaitSyncKHR(" + this + ")", error);
                    }
                    // Mesa: a woken timed wait on a reusable sync returns EGL_FALSE with no error
                    if (status() == Egl.EGL_SIGNALED_KHR()) {
                        return;
                    }
                } else if (r != Egl.EGL_TIMEOUT_EXPIRED_KHR()) {
                    throw EglNative.eglFailure("eglClientWaitSyncKHR(" + this + ") returned 0x"
                            + Integer.toHexString(r), Egl.eglGetError());
                }
                if (!forever && deadline.hasPassed()) {
                    throw new SyncTimeoutException(BackendKind.OPENGL,
                            this + " not signalled within " + Timeouts.describe(timeout));
                }
            }
        } finally {
            claim.exit();
        }
    }

    @Override
    public boolean isSignaled() {
        claim.enter();
        try {
            return status() == Egl.EGL_SIGNALED_KHR();
        } finally {
            claim.exit();
        }
    }

    private int status() {
        return attrib(display, sync, Egl.EGL_SYNC_STATUS_KHR(), "EGL_SYNC_STATUS_KHR");
    }

    @Override
    public BackendKind backend() {
        return BackendKind.OPENGL;
    }

    @Override
    public void close() {
        claim.close();
    }

    @Override
    public String toString() {
        return "EglSyncWaiter[" + (reusable ? "reusable " : "fence ") + "EGLSync " + EglNative.hex(sync) + (owned ? ", owned" : ", borrowed") + ", display "
                + EglNative.hex(display) + "]";
    }
}
