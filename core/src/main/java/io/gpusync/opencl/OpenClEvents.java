package io.gpusync.opencl;

import io.gpusync.SyncPoint;
import io.gpusync.spi.NativeAnchor;

import java.lang.foreign.MemorySegment;
import io.gpusync.opencl.OpenClProducers.OpenClContext;

/**
 * {@link SyncPoint.OpenCl} points over {@code cl_event}s that an application already holds — from
 * gpusync's own {@link OpenClContext}, from raw FFM code, or from JOCL/LWJGL, which hold handles as
 * {@code long}s. The point's waiter is an {@code OpenClEventWaiter}.
 *
 * <p><b>Owned versus borrowed.</b> A {@code cl_event} is reference-counted, so both kinds end the same
 * way — gpusync releases exactly one reference, once — and differ only in where that reference comes from:
 * <ul>
 *   <li>{@link #adopt}: the caller <em>hands over</em> a reference it holds (typically the one an
 *       {@code clEnqueue*} call returned) and must not release it itself.</li>
 *   <li>{@link #borrow}: the caller keeps its reference and may release it whenever it likes, even at
 *       once; gpusync takes its own with {@code clRetainEvent}. A waiter that did not hold a reference of
 *       its own could not keep its callback registrations and waits safe from the caller's release, and
 *       retain/release is the OpenCL way to share an event.</li>
 * </ul>
 *
 * <p><b>When the reference is released.</b> Closing a point (its waiter) is safe at any time, in a timeout's or a
 * failure's handler ({@code doOnError}, {@code doFinally}) too: gpusync releases a completed event or a user event at
 * once, and holds its reference to a command that is still pending or has just failed until the driver is done with
 * the command (on its housekeeping thread). This matters on PoCL 3.1, which aborts the process when a command fails
 * because an event in its wait list failed and the application's last reference to the command was released before
 * the driver had finished failing it. References the application keeps itself are its own to manage: do not release
 * the last one of a command that may still fail that way; {@link #adopt} it instead, or {@link #borrow} it and
 * release yours at once (gpusync's reference then outlives the driver's use), or release it after the command has
 * completed, or after the call that failed its dependency has returned.
 *
 * <p><b>Invalid handles.</b> {@code null} is a {@link NullPointerException}; NULL ({@code 0}) and heap
 * segments are a {@link io.gpusync.SyncInvalidArgumentException}, before any native call. A non-NULL
 * handle is checked by one driver call ({@code clGetEventInfo} or {@code clRetainEvent}); what the driver
 * reports ({@code CL_INVALID_EVENT}) becomes a {@link io.gpusync.SyncInvalidArgumentException}. A dangling
 * or wrong-type pointer cannot be detected: OpenCL objects carry no type tag the ICD loader checks, and
 * PoCL 3.1 accepts, for example, a {@code cl_context} where an event is expected. On failure the caller
 * keeps its reference.
 *
 * <p>All factories throw {@link io.gpusync.SyncNotSupportedException} when {@code libOpenCL.so.1} is
 * missing. Thread-safe.
 */
public final class OpenClEvents {
    private OpenClEvents() {
    }

    /** A point over {@code event}, taking over the caller's reference to it. */
    public static SyncPoint.OpenCl adopt(MemorySegment event) {
        Cl.require();
        return own(Cl.handle(event, "cl_event"));
    }

    /** {@link #adopt(MemorySegment)} for a handle held as a {@code long} (JOCL {@code getNativePointer()}, LWJGL). */
    public static SyncPoint.OpenCl adopt(long event) {
        Cl.require();
        return own(Cl.handle(event, "cl_event"));
    }

    /** A point over {@code event} holding a reference of its own ({@code clRetainEvent}); the caller keeps theirs. */
    public static SyncPoint.OpenCl borrow(MemorySegment event) {
        Cl.require();
        return retain(Cl.handle(event, "cl_event"));
    }

    /** {@link #borrow(MemorySegment)} for a handle held as a {@code long}. */
    public static SyncPoint.OpenCl borrow(long event) {
        Cl.require();
        return retain(Cl.handle(event, "cl_event"));
    }

    private static SyncPoint.OpenCl own(MemorySegment event) {
        String what = "cl_event " + Cl.hex(event);
        Cl.status(event, what); // validates the handle as far as the driver can
        return point(event, what);
    }

    private static SyncPoint.OpenCl retain(MemorySegment event) {
        String what = "cl_event " + Cl.hex(event);
        Cl.retainEvent(event, what);
        return point(event, what);
    }

    private static SyncPoint.OpenCl point(MemorySegment event, String what) {
        NativeAnchor anchor = NativeAnchor.adopt(what, Cl.releaser(event, what));
        return new SyncPoint.OpenCl(event, new OpenClEventWaiter(event, anchor, what));
    }
}
