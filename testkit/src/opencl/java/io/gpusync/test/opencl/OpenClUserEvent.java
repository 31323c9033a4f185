package io.gpusync.test.opencl;

import io.gpusync.BackendKind;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.opencl.OpenClEvents;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A host-controlled OpenCL event ({@code clCreateUserEvent}): the host decides when it completes ({@link #complete()})
 * or fails ({@link #fail(int)}), and commands that list it in their wait list start only then. The test and demo
 * producer for {@code cl_event} waits; also a way to gate queued GPU work on a host decision. It uses only
 * {@code gpusync-opencl}'s public API and the OpenCL bindings: gpusync holds the event through a point of this
 * object's own, and statuses are set through {@link OpenClEvents#setUserEventStatus}.
 *
 * <p>Its status can be set once; a second {@code complete}/{@code fail} is a driver error
 * ({@code CL_INVALID_OPERATION}). Points from {@link #newPoint()} hold references of their own, so they stay valid
 * after {@link #close()}. {@link #close()} fails a user event whose status was never set with {@link #CLOSED_UNSET},
 * so no command waits on it for ever (OpenCL leaves releasing a queue, a context or a memory object undefined while a
 * command waits on an unset user event, and PoCL's {@code clFinish} would never return). One left to the garbage
 * collector unclosed only drops its reference.
 *
 * <p><b>Threading, blocking, cancellation.</b> Thread-safe. Status changes ({@code complete}, {@code fail}, and
 * {@code close} of an unset event) go through {@link OpenClEvents#setUserEventStatus}, one at a time in the process,
 * so a call may block briefly behind another thread's; listeners registered on the event run inside them (PoCL).
 * A status change in progress keeps the event alive: {@link #close()} on another thread drops this object's reference
 * only after it. Nothing is cancellable.
 */
public final class OpenClUserEvent implements AutoCloseable {
    /**
     * The status {@link #close()} sets on a user event whose status was never set: waits on it fail with a
     * {@link SyncException} carrying this code, and the commands waiting on it are aborted. Chosen outside the ranges
     * of OpenCL's error codes and its extensions'.
     */
    public static final int CLOSED_UNSET = -990_001;

    private final MemorySegment event;
    private final SyncPoint.OpenCl hold; // gpusync's reference to the event, this object's own
    private final String what;
    private int calls;        // guarded by this: calls in progress on the event
    private boolean closed;   // guarded by this
    private boolean released; // guarded by this

    private OpenClUserEvent(MemorySegment event, String what) {
        this.event = event;
        this.what = what;
        this.hold = OpenClEvents.adopt(event);
    }

    /**
     * A new user event in {@code context} (a {@code cl_context}), with status {@code CL_SUBMITTED}.
     *
     * @throws io.gpusync.SyncNotSupportedException if OpenCL is missing
     * @throws io.gpusync.SyncException             if {@code clCreateUserEvent} fails
     */
    public static OpenClUserEvent create(MemorySegment context) {
        ClChecks.requireLibrary();
        Objects.requireNonNull(context, "context");
        if (context.address() == 0) {
            throw new SyncInvalidArgumentException(BackendKind.OPENCL, "the cl_context is NULL");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment err = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment ev = OpenCl.clCreateUserEvent(context, err);
            ClChecks.check(err.get(ValueLayout.JAVA_INT, 0), "clCreateUserEvent",
                    "cl_context 0x" + Long.toHexString(context.address()));
            MemorySegment handle = MemorySegment.ofAddress(ev.address());
            return new OpenClUserEvent(handle, "user cl_event 0x" + Long.toHexString(handle.address()));
        }
    }

    /** {@link #create(MemorySegment)} for a {@code cl_context} held as a {@code long}. */
    public static OpenClUserEvent create(long context) {
        return create(MemorySegment.ofAddress(context));
    }

    /** The {@code cl_event} (valid until {@link #close()}, or longer while points hold it). */
    public MemorySegment event() {
        return event;
    }

    /**
     * A new point on this event, holding a reference of its own (released when its waiter is closed or collected).
     *
     * @throws IllegalStateException if this user event is closed
     */
    public SyncPoint.OpenCl newPoint() {
        return holding(() -> OpenClEvents.borrow(event));
    }

    /**
     * Sets the status to {@code CL_COMPLETE}. Listeners registered on it run on this thread, inside the driver call
     * (PoCL). Status changes happen one at a time: a call may wait for another thread's.
     *
     * @throws io.gpusync.SyncException {@code CL_INVALID_OPERATION} if the status was already set
     * @throws IllegalStateException    if this user event is closed
     */
    public void complete() {
        setStatus(OpenCl.CL_COMPLETE());
    }

    /**
     * Terminates the event with the negative {@code status} (an OpenCL error code, or any negative value of the
     * application's choosing): waits on it throw a {@link SyncException} carrying that code, and commands waiting on
     * it are aborted.
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
        holding(() -> {
            OpenClEvents.setUserEventStatus(event, status);
            return null;
        });
    }

    /**
     * Drops this object's reference (points keep theirs). A status never set is set to {@link #CLOSED_UNSET} first,
     * on this thread: listeners registered on the event, and the failure of the commands waiting on it, run inside
     * this call (PoCL). Idempotent.
     */
    @Override
    public void close() {
        try {
            holding(() -> {
                if (status() > OpenCl.CL_COMPLETE()) {
                    try {
                        OpenClEvents.setUserEventStatus(event, CLOSED_UNSET);
                    } catch (SyncException setMeanwhile) {
                        // CL_INVALID_OPERATION: another thread set it meanwhile, which is as good
                    }
                }
                return null;
            });
        } catch (IllegalStateException closedMeanwhile) {
            return;
        }
        boolean release;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            release = calls == 0 && !released;
            released |= release;
        }
        if (release) {
            hold.waiter().close();
        }
    }

    /** Runs {@code call} with the event held: a concurrent {@link #close()} releases it only afterwards. */
    private <T> T holding(Supplier<T> call) {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException(this + " is closed");
            }
            calls++;
        }
        try {
            return call.get();
        } finally {
            boolean release;
            synchronized (this) {
                calls--;
                release = closed && calls == 0 && !released;
                released |= release;
            }
            if (release) {
                hold.waiter().close();
            }
        }
    }

    /** {@code CL_EVENT_COMMAND_EXECUTION_STATUS}, or {@code CL_COMPLETE} if it cannot be read. */
    private int status() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.JAVA_INT);
            int rc = OpenCl.clGetEventInfo(event, OpenCl.CL_EVENT_COMMAND_EXECUTION_STATUS(), Integer.BYTES, out,
                    MemorySegment.NULL);
            return rc == OpenCl.CL_SUCCESS() ? out.get(ValueLayout.JAVA_INT, 0) : OpenCl.CL_COMPLETE();
        }
    }

    @Override
    public String toString() {
        boolean isClosed;
        synchronized (this) {
            isClosed = closed;
        }
        return "OpenClUserEvent[" + what + (isClosed ? ", closed" : "") + "]";
    }
}
