package io.gpusync.benchmarks.subjects;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.test.opencl.OpenClContext;
import io.gpusync.test.opencl.OpenClUserEvent;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Queue-signalled OpenCL points: per point, a marker command ({@code clEnqueueMarkerWithWaitList}) enqueued
 * on an in-order queue behind a fresh user event (the gate); the point is the <em>marker's</em> event, and
 * {@code signal()} completes the gate ({@code clSetUserEventStatus(CL_COMPLETE)}), after which the device
 * runs the marker and completes its event — so the wake goes through the driver's queue (PoCL's scheduler
 * thread here), unlike {@link OpenClUserEventSubject}, whose point is the user event itself. The engine
 * serves marker events by CALLBACK ({@code clSetEventCallback}).
 *
 * <p>{@link OpenClContext#createDefault()} prefers a GPU device (NVIDIA's OpenCL on an NVIDIA machine, PoCL's CPU
 * device here). Each stream needs a queue of its own — a measured point must not queue behind the background
 * points' unopened gates — so contexts (each with one in-order queue) are pooled: a stream borrows one and
 * returns it on {@link Stream#close()}, after every gate is completed.
 */
public final class OpenClKernelSubject implements Subject {
    private static final Deque<OpenClContext> POOL = new ArrayDeque<>();
    private static String unavailable;
    private static boolean probed;

    private static synchronized OpenClContext borrow() {
        OpenClContext c = POOL.pollFirst();
        return c != null ? c : OpenClContext.createDefault();
    }

    private static synchronized void giveBack(OpenClContext c) {
        POOL.addFirst(c);
    }

    @Override
    public String name() {
        return "opencl-kernel";
    }

    @Override
    public String description() {
        return "OpenCL marker commands (clEnqueueMarkerWithWaitList) on an in-order queue, each behind a user-event "
                + "gate; signalled by completing the gate (the queue then completes the marker's event); the engine "
                + "serves the marker events by CALLBACK";
    }

    @Override
    public String unavailableReason() {
        synchronized (OpenClKernelSubject.class) {
            if (!probed) {
                probed = true;
                try {
                    giveBack(borrow());
                } catch (RuntimeException | LinkageError e) {
                    unavailable = "no OpenCL device here: " + e.getMessage();
                }
            }
            return unavailable;
        }
    }

    @Override
    public Stream newStream() {
        return new MarkerStream(borrow());
    }

    private static final class MarkerStream implements Stream {
        private final OpenClContext ctx;
        /** Gates not yet completed, by index. */
        private final Map<Integer, OpenClUserEvent> open = new HashMap<>();
        private int count;
        private boolean closed;

        MarkerStream(OpenClContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public Point next() {
            OpenClUserEvent gate = ctx.newUserEvent();
            SyncPoint.OpenCl gatePoint = gate.newPoint();
            SyncPoint.OpenCl marker;
            try {
                marker = ctx.enqueueMarker(gatePoint);
            } catch (RuntimeException e) {
                gate.complete();
                gate.close();
                throw e;
            } finally {
                gatePoint.waiter().close(); // the enqueued marker holds the gate in its wait list
            }
            SyncWaiter waiter = marker.waiter(); // owns the marker's event; released by its Cleaner once unreachable
            int index;
            synchronized (this) {
                index = count++;
                open.put(index, gate);
            }
            return new Point() {
                @Override
                public SyncWaiter waiter() {
                    return waiter;
                }

                @Override
                public void signal() {
                    complete(index);
                }
            };
        }

        private void complete(int index) {
            OpenClUserEvent gate;
            synchronized (this) {
                gate = open.remove(index);
            }
            if (gate != null) {
                gate.complete();
                gate.close();
            }
        }

        @Override
        public void signalAll() {
            List<Integer> indices;
            synchronized (this) {
                indices = new ArrayList<>(open.keySet());
            }
            indices.sort(null); // in-order queue: open the gates in enqueue order
            indices.forEach(this::complete);
        }

        @Override
        public long registrations() {
            return -1;
        }

        @Override
        public void close() {
            signalAll(); // no command may still wait on an unset user event when the queue is reused or released
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            giveBack(ctx);
        }
    }
}
