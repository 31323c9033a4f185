package io.gpusync.opencl;

import io.gpusync.SyncPoint;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * An in-order {@code cl_command_queue} of the application's, through which it enqueues commands after gpusync points
 * and gets their events back as points. {@link #enqueue} builds the wait list from the points (each kept alive across
 * the call), makes the application's enqueue call, flushes, and {@linkplain OpenClEvents#adopt adopts} the new
 * command's event, recording what the command waits on: its wait list and the command enqueued before it through
 * this object. That is what lets gpusync release a command that fails as soon as those can no longer notify it,
 * instead of holding it for the life of the process as it must for a command it did not see enqueued
 * ({@link OpenClEvents}).
 *
 * <p>Commands that other code enqueues on the same queue are not seen: one of them still pending when a later command
 * enqueued here fails would still list it, so enqueue through one {@code OpenClQueue} only, or let such commands
 * terminate first.
 *
 * <p><b>Threading.</b> Thread-safe: enqueues are serialised on this object (the call runs under its monitor, so a
 * kernel's arguments set inside it are not raced by another enqueue here). <b>Blocking.</b> An enqueue makes the
 * application's call and one {@code clFlush}; it never waits for the command, but both wait while a user event is
 * being failed through gpusync ({@link OpenClEvents#setUserEventStatus} with a negative status: PoCL 3.1 frees commands
 * under a failure and an enqueue at once), up to about 100 ms. <b>Cancellation.</b> None: an enqueued
 * command runs; close its point to stop waiting for it.
 *
 * <p><b>Lifetime.</b> The queue is borrowed: the caller keeps its reference and releases it after its last enqueue
 * here (OpenCL keeps what pending commands use). Points stay valid after that.
 */
public final class OpenClQueue {
    private final MemorySegment queue;
    private final String what;
    private ClEventRelease.Ref last; // guarded by this: the command enqueued last (no reference); the next waits on it

    private OpenClQueue(MemorySegment queue) {
        this.queue = queue;
        this.what = "cl_command_queue " + Cl.hex(queue);
    }

    /**
     * gpusync's view of the caller's in-order {@code queue}.
     *
     * @throws io.gpusync.SyncNotSupportedException    if OpenCL is missing
     * @throws io.gpusync.SyncInvalidArgumentException for a NULL handle
     */
    public static OpenClQueue borrow(MemorySegment queue) {
        Cl.require();
        return new OpenClQueue(Cl.handle(queue, "cl_command_queue"));
    }

    /** {@link #borrow(MemorySegment)} for a handle held as a {@code long} (JOCL, LWJGL). */
    public static OpenClQueue borrow(long queue) {
        Cl.require();
        return new OpenClQueue(Cl.handle(queue, "cl_command_queue"));
    }

    /** The {@code cl_command_queue}. */
    public MemorySegment queue() {
        return queue;
    }

    /** One {@code clEnqueue*} call of the application's, given the wait list gpusync built. */
    @FunctionalInterface
    public interface Enqueue {
        /**
         * Enqueues the command on the queue with this wait list and writes its event to {@code event}.
         *
         * @param numEventsInWaitList the wait list's length
         * @param eventWaitList       the {@code cl_event}s to wait for (NULL when there are none)
         * @param event               where the call writes the new command's {@code cl_event}
         * @return the call's {@code cl_int} result
         */
        int enqueue(int numEventsInWaitList, MemorySegment eventWaitList, MemorySegment event);
    }

    /**
     * Enqueues a command after {@code waitFor} through {@code enqueue} (named {@code call} in errors), flushes the
     * queue, and returns the command's event as a point that holds the reference the call returned.
     *
     * @throws io.gpusync.SyncException if the call or the flush fails (nothing is adopted if the call fails)
     */
    public synchronized SyncPoint.OpenCl enqueue(String call, Enqueue enqueue, SyncPoint.OpenCl... waitFor) {
        Objects.requireNonNull(call, "call");
        Objects.requireNonNull(enqueue, "enqueue");
        List<OpenClEventWaiter> entered = new ArrayList<>();
        List<ClEventRelease.Ref> waitsOn = new ArrayList<>();
        try (Arena a = Arena.ofConfined()) {
            if (last != null) { // taken before the call: one gpusync has let go of can no longer be waited on
                ClEventRelease.Ref previous = ClEventRelease.retainIfHeld(last);
                if (previous != null) {
                    waitsOn.add(previous);
                }
            }
            MemorySegment list = MemorySegment.NULL;
            if (waitFor.length > 0) {
                list = a.allocate(ValueLayout.ADDRESS, waitFor.length);
                for (int i = 0; i < waitFor.length; i++) {
                    MemorySegment event = waitFor[i].event();
                    OpenClEventWaiter w = waitFor[i].waiter() instanceof OpenClEventWaiter e ? e : null;
                    if (waitFor[i].waiter() instanceof OpenClSemaphoreWaiter s) { // wait for its wait command
                        w = s.waitCommand();
                        event = s.waitEvent();
                    }
                    if (w != null) {
                        w.enter(); // keeps the event alive across the call
                        entered.add(w);
                    }
                    list.setAtIndex(ValueLayout.ADDRESS, i, Cl.handle(event, "wait-list cl_event"));
                }
                for (int i = 0; i < waitFor.length; i++) {
                    MemorySegment waited = list.getAtIndex(ValueLayout.ADDRESS, i);
                    waitsOn.add(ClEventRelease.retain(waited, "cl_event " + Cl.hex(waited)));
                }
            }
            MemorySegment out = a.allocate(ValueLayout.ADDRESS);
            MemorySegment waitList = list;
            ClErrors.check(ClEventRelease.enqueueing(() -> enqueue.enqueue(waitFor.length, waitList, out)), call, what);
            MemorySegment event = MemorySegment.ofAddress(out.get(ValueLayout.ADDRESS, 0).address());
            int rc = ClEventRelease.enqueueing(() -> io.gpusync.bindings.opencl.OpenCl.clFlush(queue));
            ClEventRelease.Ref command = ClEventRelease.adopt(event, "cl_event " + Cl.hex(event));
            ClEventRelease.waitsOn(command, waitsOn);
            waitsOn.clear();
            last = command;
            SyncPoint.OpenCl point = OpenClEvents.point(command);
            ClErrors.check(rc, "clFlush", what);
            return point;
        } finally {
            waitsOn.forEach(ClEventRelease::drop); // a failure half-way: what was taken goes again
            entered.forEach(OpenClEventWaiter::exit);
        }
    }

    @Override
    public String toString() {
        return "OpenClQueue[" + what + "]";
    }
}
