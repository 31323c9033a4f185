package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.GlBackend;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.bindings.gles.Gles;
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
 * The waiter of a {@code GLsync} ({@link io.gpusync.SyncPoint.OpenGLSync} with platform
 * {@link GlBackend#EGL}). Each {@link #await} / {@link #isSignaled()} borrows a context of the producer's
 * share group from {@link ShareContexts}, makes it current on the calling thread, calls
 * {@code glClientWaitSync} / {@code glGetSynciv(GL_SYNC_STATUS)}, and restores the thread's previous binding.
 *
 * <p><b>Timeouts.</b> {@code glClientWaitSync} takes a {@code GLuint64} of nanoseconds and has no
 * "forever" value ({@code GL_TIMEOUT_IGNORED} is for {@code glWaitSync} only, and drivers differ in how they
 * treat huge values — some add it to the clock and overflow). So every wait runs in slices of at most 50 ms
 * through {@link WaitLoop} until its deadline; {@code FOREVER} is a loop of slices. A slice that returns
 * {@code GL_TIMEOUT_EXPIRED} early (before the deadline) is followed by another one, so a timeout is never
 * reported early; an interrupt ends the wait within a slice with {@link io.gpusync.SyncCancelledException},
 * the flag kept set. In a share group whose fences are {@linkplain FenceWaits#PROBED probed} (Mesa's), no wait
 * sleeps inside the driver: {@link #await} calls {@code glClientWaitSync} with a zero timeout through
 * {@link ProbeLoop} instead, with the same timeout and interrupt rules.
 *
 * <p><b>Flush rule.</b> {@code GL_SYNC_FLUSH_COMMANDS_BIT} flushes the <em>current</em> context. It is passed
 * only when the calling thread already has the producer context current (then the wait runs on it directly,
 * with no bind); from any other context the bit would flush the wrong context, so a fence waited on from
 * another thread must have been flushed by its producer (the test kit's {@code EglProducer} does {@code glFlush} after
 * {@code glFenceSync}). An unflushed fence may never signal for such a waiter — that is the GL rule, not a
 * gpusync limitation.
 *
 * <p>Every call first checks {@code glIsSync}: a handle that is not a live sync object of the share group
 * becomes a {@link SyncInvalidArgumentException} instead of undefined behaviour in the driver.
 *
 * <p><b>Not wakeable</b> (no {@link io.gpusync.spi.WakeableWaiter}): {@code glClientWaitSync} waits on one
 * fence and nothing else can end it early, so an engine's blocking thread on a cancelled wait is freed at
 * the end of its slice ({@code SyncEngine.Builder.blockingSlice}).
 */
final class GlSyncWaiter implements BlockingWaiter {
    private final GlShareGroup group; // keeps the group reachable while this waiter is
    private final ShareContexts contexts;
    private final MemorySegment sync;
    private final NativeAnchor.Claim claim;
    private final boolean adopted;

    GlSyncWaiter(GlShareGroup group, MemorySegment sync, NativeAnchor anchor) {
        this.group = group;
        this.contexts = group.contexts();
        this.sync = sync;
        this.adopted = anchor.isAdopted();
        this.claim = anchor.claim(this);
    }

    /**
     * The release action of an owned GLsync: delete it in the share group, then drop the group hold. It binds
     * an EGL context, so its anchor runs it on the housekeeping thread ({@code NativeAnchor.adoptBlocking}).
     */
    record Delete(ShareContexts contexts, MemorySegment sync, NativeAnchor.Claim groupHold) implements Runnable {
        @Override
        public void run() {
            try {
                contexts.runBound(() -> Gles.glDeleteSync(sync));
            } finally {
                groupHold.exit();
            }
        }
    }

    /** The engine waits on {@link EglThreads}: no thread of its own makes this waiter's EGL calls. */
    @Override
    public Executor waitThreads() {
        return EglThreads.lender();
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        held(() -> {
            // each call binds on a thread that may make EGL calls (EglThreads), so the loop's interrupt checks
            // stay on the waiting thread
            WaitLoop.Slice slice = nanos -> contexts.callBound(b -> {
                requireLiveSync();
                return waitSlice(b.onProducer() ? Gles.GL_SYNC_FLUSH_COMMANDS_BIT() : 0, nanos);
            });
            Supplier<SyncTimeoutException> timedOut = () -> new SyncTimeoutException(BackendKind.OPENGL,
                    this + " not signalled within " + Timeouts.describe(timeout));
            if (contexts.fenceWaits == FenceWaits.PROBED) {
                ProbeLoop.await(timeout, () -> slice.await(0), this, timedOut);
            } else {
                WaitLoop.await(timeout, WaitLoop.INTERRUPT_CHECK_NANOS, slice, this, timedOut);
            }
            return null;
        });
    }

    private boolean waitSlice(int flags, long nanos) {
        int r = Gles.glClientWaitSync(sync, flags, nanos);
        if (r == Gles.GL_ALREADY_SIGNALED() || r == Gles.GL_CONDITION_SATISFIED()) {
            return true;
        }
        if (r != Gles.GL_TIMEOUT_EXPIRED()) {
            throw EglNative.glFailure("glClientWaitSync(" + this + ") returned "
                    + (r == Gles.GL_WAIT_FAILED() ? "GL_WAIT_FAILED" : "0x" + Integer.toHexString(r)));
        }
        return false;
    }

    @Override
    public boolean isSignaled() {
        return held(() -> contexts.callBound(b -> {
            requireLiveSync();
            MemorySegment value = EglNative.Scratch.get().word;
            value.set(ValueLayout.JAVA_INT, 0, -1);
            Gles.glGetSynciv(sync, Gles.GL_SYNC_STATUS(), 1, MemorySegment.NULL, value);
            int status = value.get(ValueLayout.JAVA_INT, 0);
            if (status == Gles.GL_SIGNALED()) {
                return true;
            }
            if (status == Gles.GL_UNSIGNALED()) {
                return false;
            }
            throw EglNative.glFailure("glGetSynciv(" + this + ", GL_SYNC_STATUS)");
        }));
    }

    private void requireLiveSync() {
        if (Gles.glIsSync(sync) == 0) {
            throw new SyncInvalidArgumentException(BackendKind.OPENGL, EglNative.hex(sync)
                    + " is not a live GLsync of the share group of context " + EglNative.hex(contexts.producer)
                    + " (deleted, never created, or from another share group)");
        }
    }

    /** Runs a wait or probe with the sync (and, for a borrowed one, the group's contexts) held alive. */
    private <T> T held(Supplier<T> action) {
        return claim.call(adopted ? action : () -> group.duringWait(action));
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
        return "GlSyncWaiter[GLsync " + EglNative.hex(sync) + (adopted ? ", adopted" : ", borrowed") + ", context "
                + EglNative.hex(contexts.producer) + "]";
    }
}
