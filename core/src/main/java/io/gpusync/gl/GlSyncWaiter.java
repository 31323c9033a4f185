package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.GlBackend;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.bindings.gles.Gles;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.Deadline;
import io.gpusync.spi.NativeAnchor;
import io.gpusync.spi.Timeouts;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The waiter of a {@code GLsync} ({@link io.gpusync.SyncPoint.OpenGLSync} with platform
 * {@link GlBackend#EGL}). Each {@link #await} / {@link #isSignaled()} borrows a context of the producer's
 * share group from {@link ShareContexts}, makes it current on the calling thread, calls
 * {@code glClientWaitSync} / {@code glGetSynciv(GL_SYNC_STATUS)}, and restores the thread's previous binding.
 *
 * <p><b>Timeouts.</b> {@code glClientWaitSync} takes a {@code GLuint64} of nanoseconds and has no
 * "forever" value ({@code GL_TIMEOUT_IGNORED} is for {@code glWaitSync} only, and drivers differ in how they
 * treat huge values — some add it to the clock and overflow). So every wait runs in slices of at most
 * {@value #SLICE_NANOS} ns until its deadline; {@code FOREVER} is a loop of 1-second slices. A slice that
 * returns {@code GL_TIMEOUT_EXPIRED} early (before the deadline) is followed by another one, so a timeout is
 * never reported early.
 *
 * <p><b>Flush rule.</b> {@code GL_SYNC_FLUSH_COMMANDS_BIT} flushes the <em>current</em> context. It is passed
 * only when the calling thread already has the producer context current (then the wait runs on it directly,
 * with no bind); from any other context the bit would flush the wrong context, so a fence waited on from
 * another thread must have been flushed by its producer ({@link EglProducer} does {@code glFlush} after
 * {@code glFenceSync}). An unflushed fence may never signal for such a waiter — that is the GL rule, not a
 * gpusync limitation.
 *
 * <p>Every call first checks {@code glIsSync}: a handle that is not a live sync object of the share group
 * becomes a {@link SyncInvalidArgumentException} instead of undefined behaviour in the driver.
 */
final class GlSyncWaiter implements BlockingWaiter {
    static final long SLICE_NANOS = 1_000_000_000L;
    /** Owned GLsyncs deleted so far (tests check "exactly once"). */
    static final AtomicLong DELETED = new AtomicLong();

    private final GlShareGroup group; // keeps the group reachable while this waiter is
    private final ShareContexts contexts;
    private final MemorySegment sync;
    private final NativeAnchor.Claim claim;
    private final boolean owned;

    GlSyncWaiter(GlShareGroup group, MemorySegment sync, NativeAnchor anchor) {
        this.group = group;
        this.contexts = group.contexts();
        this.sync = sync;
        this.owned = anchor.isOwned();
        this.claim = anchor.claim(this);
    }

    /** The release action of an owned GLsync: delete it in the share group, then drop the group hold. */
    record Delete(ShareContexts contexts, MemorySegment sync, NativeAnchor.Claim groupHold) implements Runnable {
        @Override
        public void run() {
            try (ShareContexts.Binding ignored = contexts.bind()) {
                Gles.glDeleteSync(sync);
                DELETED.incrementAndGet();
            } finally {
                groupHold.exit();
            }
        }
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        enter();
        try (ShareContexts.Binding b = contexts.bind()) {
            requireLiveSync();
            int flags = b.onProducer() ? Gles.GL_SYNC_FLUSH_COMMANDS_BIT() : 0;
            Deadline deadline = Deadline.after(timeout);
            while (true) {
                long slice = Math.min(deadline.remainingNanos(), SLICE_NANOS);
                int r = Gles.glClientWaitSync(sync, flags, slice);
                if (r == Gles.GL_ALREADY_SIGNALED() || r == Gles.GL_CONDITION_SATISFIED()) {
                    return;
                }
                if (r != Gles.GL_TIMEOUT_EXPIRED()) {
                    throw EglNative.glFailure("glClientWaitSync(" + this + ") returned "
                            + (r == Gles.GL_WAIT_FAILED() ? "GL_WAIT_FAILED" : "0x" + Integer.toHexString(r)));
                }
                if (deadline.hasPassed()) {
                    throw new SyncTimeoutException(BackendKind.OPENGL,
                            this + " not signalled within " + Timeouts.describe(timeout));
                }
            }
        } finally {
            exit();
        }
    }

    @Override
    public boolean isSignaled() {
        enter();
        try (ShareContexts.Binding ignored = contexts.bind()) {
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
        } finally {
            exit();
        }
    }

    private void requireLiveSync() {
        if (Gles.glIsSync(sync) == 0) {
            throw new SyncInvalidArgumentException(BackendKind.OPENGL, EglNative.hex(sync)
                    + " is not a live GLsync of the share group of context " + EglNative.hex(contexts.producer)
                    + " (deleted, never created, or from another share group)");
        }
    }

    private void enter() {
        claim.enter();
        if (!owned) {
            try {
                group.enterWait();
            } catch (RuntimeException e) {
                claim.exit();
                throw e;
            }
        }
    }

    private void exit() {
        try {
            if (!owned) {
                group.exitWait();
            }
        } finally {
            claim.exit();
        }
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
        return "GlSyncWaiter[GLsync " + EglNative.hex(sync) + (owned ? ", owned" : ", borrowed") + ", context "
                + EglNative.hex(contexts.producer) + "]";
    }
}
