package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.SyncTimeoutException;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.bindings.egl.PFNEGLCLIENTWAITSYNCKHRPROC;
import io.gpusync.bindings.egl.PFNEGLDESTROYSYNCKHRPROC;
import io.gpusync.bindings.egl.PFNEGLGETSYNCATTRIBKHRPROC;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.kit.ProbeLoop;
import io.gpusync.spi.Timeouts;
import io.gpusync.kit.WaitLoop;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * The waiter of an {@code EGLSync} (a fence sync of {@code EGL_KHR_fence_sync} or a host-signalled sync of
 * {@code EGL_KHR_reusable_sync}). Needs no GL context: {@link #await} blocks in
 * {@code eglClientWaitSyncKHR} in slices of at most 50 ms through {@link WaitLoop} (never
 * {@code EGL_FOREVER_KHR}: {@code FOREVER} loops; a slice that returns {@code EGL_TIMEOUT_EXPIRED} before the
 * deadline is followed by another, so timeouts are never early; an interrupt ends the wait within a slice
 * with {@link io.gpusync.SyncCancelledException}, the flag kept set), {@link #isSignaled()} reads
 * {@code eglGetSyncAttribKHR(EGL_SYNC_STATUS)}. A fence sync of a display whose fences are
 * {@linkplain FenceWaits#PROBED probed} (Mesa's) is never waited on inside the driver: {@link #await} calls
 * {@code eglClientWaitSyncKHR} with a zero timeout through {@link ProbeLoop} instead, with the same timeout and
 * interrupt rules.
 *
 * <p>Waits pass no {@code EGL_SYNC_FLUSH_COMMANDS_BIT}: it would flush whatever context happens to be current
 * on the calling thread, not the fence's; the producer must have flushed after creating a fence sync.
 *
 * <p><b>Reusable syncs on Mesa</b> (checked on 22.3, and the code is unchanged in later releases): (1) a timed
 * wait that is woken by {@code eglSignalSyncKHR} returns {@code EGL_FALSE} without setting an error (the
 * driver returns {@code cnd_timedwait}'s {@code thrd_success}, which is 0); (2) the driver checks the status
 * outside the condition variable's mutex, so a signal that lands between the check and the wait is lost; and
 * its {@code EGL_FOREVER_KHR} path does not check the status at all; (3) a timed wait whose wake-up was lost
 * that way times out with the sync signalled, and then returns {@code EGL_FALSE} with {@code EGL_BAD_ACCESS}
 * instead of {@code EGL_TIMEOUT_EXPIRED_KHR}. The bounded slices mean a lost wake-up costs at most one slice;
 * and {@code EGL_FALSE} with {@code EGL_SUCCESS} or {@code EGL_BAD_ACCESS} on a reusable sync is taken as
 * "woken", confirmed by reading {@code EGL_SYNC_STATUS} (still unsignalled → keep waiting; an invalid sync
 * makes that read throw). Consequence: a signal immediately followed by an unsignal may be missed by a waiter;
 * treat reusable syncs as level-triggered.
 *
 * <p><b>Not wakeable</b> (no {@link io.gpusync.spi.WakeableWaiter}): {@code eglClientWaitSyncKHR} waits on
 * one sync and EGL has no wait-any, so nothing but the sync itself can end a wait early (signalling a
 * reusable sync would change the point's state). An engine's blocking thread on a cancelled wait is freed
 * at the end of its slice ({@code SyncEngine.Builder.blockingSlice}).
 */
final class EglSyncWaiter implements BlockingWaiter {
    private final MemorySegment display;
    private final MemorySegment sync;
    private final NativeAnchor.Claim claim;
    private final boolean adopted;
    private final boolean reusable;
    private final FenceWaits waits;

    EglSyncWaiter(MemorySegment display, MemorySegment sync, NativeAnchor anchor) {
        this.display = display;
        this.sync = sync;
        this.waits = EglThreads.run(() -> {
            boolean isReusable = attribHere(display, sync, Egl.EGL_SYNC_TYPE_KHR(), "EGL_SYNC_TYPE_KHR")
                    == Egl.EGL_SYNC_REUSABLE_KHR();
            return isReusable ? null : FenceWaits.of(display); // one hop for both questions
        });
        this.reusable = waits == null;
        this.adopted = anchor.isAdopted();
        this.claim = anchor.claim(this);
    }

    /** The release action of an owned EGLSync. */
    record Destroy(MemorySegment display, MemorySegment sync) implements Runnable {
        @Override
        public void run() {
            EglThreads.run(() -> {
                MemorySegment fn = EglNative.Khr.require(EglNative.Khr.DESTROY_SYNC, "eglDestroySyncKHR");
                if (PFNEGLDESTROYSYNCKHRPROC.invoke(fn, display, sync) == Egl.EGL_FALSE()) {
                    throw EglNative.eglFailure("eglDestroySyncKHR(" + EglNative.hex(sync) + ")");
                }
            });
        }
    }

    /** The sync's {@code EGL_SYNC_TYPE_KHR}; throws the EGL error for an invalid display or sync. */
    static int syncType(MemorySegment display, MemorySegment sync) {
        return attrib(display, sync, Egl.EGL_SYNC_TYPE_KHR(), "EGL_SYNC_TYPE_KHR");
    }

    private static int attrib(MemorySegment display, MemorySegment sync, int attribute, String name) {
        return EglThreads.run(() -> attribHere(display, sync, attribute, name));
    }

    private static int attribHere(MemorySegment display, MemorySegment sync, int attribute, String name) {
        MemorySegment fn = EglNative.Khr.require(EglNative.Khr.GET_SYNC_ATTRIB, "eglGetSyncAttribKHR");
        MemorySegment value = EglNative.Scratch.get().word;
        value.set(ValueLayout.JAVA_INT, 0, 0);
        if (PFNEGLGETSYNCATTRIBKHRPROC.invoke(fn, display, sync, attribute, value) == Egl.EGL_FALSE()) {
            throw EglNative.eglFailure("eglGetSyncAttribKHR(EGLSync " + EglNative.hex(sync) + ", " + name + ")");
        }
        return value.get(ValueLayout.JAVA_INT, 0);
    }

    /** The engine waits on {@link EglThreads}: no thread of its own makes this waiter's EGL calls. */
    @Override
    public Executor waitThreads() {
        return EglThreads.lender();
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        claim.run(() -> {
            MemorySegment fn = EglNative.Khr.require(EglNative.Khr.CLIENT_WAIT_SYNC, "eglClientWaitSyncKHR");
            Supplier<SyncTimeoutException> timedOut = () -> new SyncTimeoutException(BackendKind.OPENGL,
                    this + " not signalled within " + Timeouts.describe(timeout));
            // each call on a thread that may make EGL calls (EglThreads); the interrupt checks stay here
            if (waits == FenceWaits.PROBED) {
                ProbeLoop.await(timeout, () -> EglThreads.run(() -> waitSlice(fn, 0)), this, timedOut);
            } else {
                WaitLoop.await(timeout, WaitLoop.INTERRUPT_CHECK_NANOS,
                        nanos -> EglThreads.run(() -> waitSlice(fn, nanos)), this, timedOut);
            }
        });
    }

    private boolean waitSlice(MemorySegment fn, long nanos) {
        int r = PFNEGLCLIENTWAITSYNCKHRPROC.invoke(fn, display, sync, 0, nanos);
        if (r == Egl.EGL_CONDITION_SATISFIED_KHR()) {
            return true;
        }
        if (r == Egl.EGL_FALSE()) {
            int error = Egl.eglGetError();
            if (!(reusable && (error == Egl.EGL_SUCCESS() || error == Egl.EGL_BAD_ACCESS()))) {
                throw EglNative.eglFailure("eglClientWaitSyncKHR(" + this + ")", error);
            }
            // Mesa: a woken timed wait on a reusable sync returns EGL_FALSE with no error, and one that timed out
            // after a lost wake-up returns EGL_FALSE with EGL_BAD_ACCESS although the sync is signalled
            int status = attribHere(display, sync, Egl.EGL_SYNC_STATUS_KHR(), "EGL_SYNC_STATUS_KHR");
            return status == Egl.EGL_SIGNALED_KHR();
        }
        if (r != Egl.EGL_TIMEOUT_EXPIRED_KHR()) {
            throw EglNative.eglFailure("eglClientWaitSyncKHR(" + this + ") returned 0x"
                    + Integer.toHexString(r), Egl.eglGetError());
        }
        return false;
    }

    @Override
    public boolean isSignaled() {
        return claim.call(() -> status() == Egl.EGL_SIGNALED_KHR());
    }

    private int status() {
        return attrib(display, sync, Egl.EGL_SYNC_STATUS_KHR(), "EGL_SYNC_STATUS_KHR");
    }

    /** How {@link #await} waits on this sync: {@code null} for a reusable sync (always sliced driver waits). */
    FenceWaits fenceWaits() {
        return waits;
    }

    /** The anchor of the sync object (tests observe its release through it). */
    NativeAnchor anchor() {
        return claim.anchor();
    }

    @Override
    public BackendKind backend() {
        return BackendKind.OPENGL;
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> whenReleased() {
        return claim.anchor().whenReleased();
    }

    @Override
    public void close() {
        claim.close();
    }

    @Override
    public String toString() {
        return "EglSyncWaiter[" + (reusable ? "reusable " : "fence ") + "EGLSync " + EglNative.hex(sync) + (adopted ? ", adopted" : ", borrowed") + ", display "
                + EglNative.hex(display) + "]";
    }
}
