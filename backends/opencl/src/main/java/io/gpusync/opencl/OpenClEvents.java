package io.gpusync.opencl;

import io.gpusync.SyncPoint;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.MemorySegment;

/**
 * {@link SyncPoint.OpenCl} points over {@code cl_event}s that an application already holds — from
 * an {@link OpenClQueue} enqueue, from raw FFM code, or from JOCL/LWJGL, which hold handles as
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
 * failure's handler ({@code doOnError}, {@code doFinally}) too: gpusync never releases its last reference to an event
 * while the driver may still touch it. On PoCL 3.1 that matters: when an event terminates, PoCL locks every command
 * still listed as waiting on it, and a command that fails (because one event it waits on failed) stays listed by the
 * others until they terminate; if it has been freed by then, PoCL aborts the process. So gpusync releases a user event
 * or a completed command at once, holds a pending command until it terminates, and holds a failed one until every
 * event it waits on has terminated and the driver is done with it (a user event: the call that set it has returned; a
 * command: the driver has dropped its own reference, which it does after notifying the dependents). gpusync knows what
 * a command waits on only when the command was enqueued through an {@link OpenClQueue}; a command
 * {@link #adopt adopted}
 * or {@link #borrow borrowed} here that fails is held for the life of the process (the event, and through it its
 * queue and context, stay allocated) rather than risk the abort.
 *
 * <p><b>References the application keeps</b> are its own to release, by the same rule: a user event's or a completed
 * command's at any time; never the last one of a command while it is pending; a failed command's last one only once
 * every event it waits on — its wait list and, on an in-order queue, the command enqueued just before it (on an
 * out-of-order queue, the last barrier before it) — has terminated and the driver is done with it as above (for a
 * command, its {@code CL_EVENT_REFERENCE_COUNT} no longer counts the driver's own reference). While a point on the
 * event is open, the application's release is not the last one and is safe. Handing the reference to gpusync with
 * {@link #adopt} moves the duty to gpusync, with the hold described above.
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
        return point(ClEventRelease.adopt(event, what));
    }

    private static SyncPoint.OpenCl retain(MemorySegment event) {
        return point(ClEventRelease.retain(event, "cl_event " + Cl.hex(event)));
    }

    /**
     * Sets a user event's status ({@code clSetUserEventStatus}): {@code CL_COMPLETE}, or a negative value that fails
     * it (waits on it then throw a {@link io.gpusync.SyncException} carrying that code, and commands waiting on it are
     * aborted). Set the statuses of user events that gpusync has points on through here: while gpusync holds
     * references to the event the call counts as in flight, so gpusync never lets go of a command that waits on the
     * event during it.
     *
     * <p><b>Threading and blocking.</b> Status changes made through this method run one at a time in the process, so
     * a call may block briefly behind another thread's (PoCL 3.1 can both fail and run a command whose dependencies
     * end at once on two threads, one failing, and then uses the freed command). For the same reason a failing status
     * first waits, for at most 100 ms, until no other dependency of a command that gpusync enqueued behind the event
     * ({@link OpenClQueue}) is about to end: on an in-order queue, the command before it, still running or being
     * completed by the driver's thread. Listeners registered on the event
     * run on this thread, inside the driver call (PoCL); they may set other user events' statuses (reentrant). Not
     * cancellable: the status is set once the call returns.
     *
     * @throws io.gpusync.SyncInvalidArgumentException for a NULL handle
     * @throws io.gpusync.SyncException                {@code CL_INVALID_OPERATION} if the status was already set, or
     *                                                 another driver error
     */
    public static void setUserEventStatus(MemorySegment event, int status) {
        Cl.require();
        MemorySegment e = Cl.handle(event, "user cl_event");
        ClErrors.check(ClEventRelease.setStatus(e, status), "clSetUserEventStatus(" + status + ")",
                "user cl_event " + Cl.hex(e));
    }

    /** A point holding one of gpusync's references to {@code ref}'s event, dropped when the anchor is released. */
    static SyncPoint.OpenCl point(ClEventRelease.Ref ref) {
        NativeAnchor anchor = NativeAnchor.adopt(ref.what, ClEventRelease.releaser(ref));
        return new SyncPoint.OpenCl(ref.event, new OpenClEventWaiter(ref.event, anchor, ref.what));
    }
}
