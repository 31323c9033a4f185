package io.gpusync.opencl;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.spi.NativeAnchor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A host-controlled OpenCL event ({@code clCreateUserEvent}): the host decides when it completes
 * ({@link #complete()}) or fails ({@link #fail(int)}), and commands that list it in their wait list start
 * only then. The test and demo producer for {@code cl_event} waits; also a way to gate queued GPU work on a
 * host decision.
 *
 * <p>Its status can be set once; a second {@code complete}/{@code fail} is a driver error
 * ({@code CL_INVALID_OPERATION}). Points from {@link #newPoint()} hold references of their own, so they stay
 * valid after {@link #close()}. OpenCL leaves it undefined to release a queue, context or memory object
 * while a command waits on a user event whose status was never set: set it first.
 *
 * <p>Thread-safe.
 */
public final class OpenClUserEvent implements AutoCloseable {
    private final MemorySegment event;
    private final NativeAnchor.Claim claim;
    private final String what;

    private OpenClUserEvent(MemorySegment event, String what) {
        this.event = event;
        this.what = what;
        this.claim = NativeAnchor.owned(what, Cl.releaser(event, what)).claim(this);
    }

    /**
     * A new user event in {@code context} (a {@code cl_context}), with status {@code CL_SUBMITTED}.
     *
     * @throws io.gpusync.SyncNotSupportedException if OpenCL is missing
     * @throws io.gpusync.SyncException             if {@code clCreateUserEvent} fails
     */
    public static OpenClUserEvent create(MemorySegment context) {
        Cl.require();
        MemorySegment ctx = Cl.handle(context, "cl_context");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment err = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment ev = OpenCl.clCreateUserEvent(ctx, err);
            ClErrors.check(err.get(ValueLayout.JAVA_INT, 0), "clCreateUserEvent", "cl_context " + Cl.hex(ctx));
            MemorySegment handle = MemorySegment.ofAddress(ev.address());
            return new OpenClUserEvent(handle, "user cl_event " + Cl.hex(handle));
        }
    }

    /** {@link #create(MemorySegment)} for a {@code cl_context} held as a {@code long}. */
    public static OpenClUserEvent create(long context) {
        Cl.require();
        return create(Cl.handle(context, "cl_context"));
    }

    /** The {@code cl_event} (valid until {@link #close()}, or longer while points hold it). */
    public MemorySegment event() {
        return event;
    }

    /**
     * A new point on this event, holding a reference of its own (released when its waiter is closed or
     * collected).
     *
     * @throws IllegalStateException if this user event is closed
     */
    public SyncPoint.OpenCl newPoint() {
        return claim.call(() -> OpenClEvents.borrowed(event));
    }

    /**
     * Sets the status to {@code CL_COMPLETE}. Listeners registered on it run on this thread, inside the
     * driver call (PoCL).
     *
     * @throws io.gpusync.SyncException  {@code CL_INVALID_OPERATION} if the status was already set
     * @throws IllegalStateException     if this user event is closed
     */
    public void complete() {
        setStatus(OpenCl.CL_COMPLETE());
    }

    /**
     * Terminates the event with the negative {@code status} (an OpenCL error code, or any negative value of
     * the application's choosing): waits on it throw a {@link io.gpusync.SyncException} carrying that
     * code, and commands waiting on it are aborted.
     *
     * @throws SyncInvalidArgumentException if {@code status} is not negative
     * @throws io.gpusync.SyncException     {@code CL_INVALID_OPERATION} if the status was already set
     */
    public void fail(int status) {
        if (status >= 0) {
            throw new SyncInvalidArgumentException(BackendKind.OPENCL,
                    "a failed user event needs a negative status, got " + status);
        }
        setStatus(status);
    }

    private void setStatus(int status) {
        claim.run(() -> ClErrors.check(OpenCl.clSetUserEventStatus(event, status),
                "clSetUserEventStatus(" + status + ")", what));
    }

    /** Drops this object's reference (points keep theirs). Does not change the status. Idempotent. */
    @Override
    public void close() {
        claim.close();
    }

    @Override
    public String toString() {
        return "OpenClUserEvent[" + what + (claim.isClosed() ? ", closed" : "") + "]";
    }
}
