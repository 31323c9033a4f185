package io.gpusync.benchmarks.subjects;

import io.gpusync.SyncWaiter;
import io.gpusync.test.opencl.OpenClContext;
import io.gpusync.test.opencl.OpenClUserEvent;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One OpenCL user event per point ({@code clCreateUserEvent}), completed by the host
 * ({@code clSetUserEventStatus(CL_COMPLETE)}); the engine serves them by CALLBACK ({@code clSetEventCallback};
 * PoCL runs the callback inside the status call, the engine hands it to its event loop). One context (PoCL
 * here) shared by all streams, created on first use.
 */
public final class OpenClUserEventSubject implements Subject {
    private static OpenClContext context;
    private static String unavailable;

    private static synchronized OpenClContext context() {
        if (context == null) {
            context = OpenClContext.createDefault();
        }
        return context;
    }

    @Override
    public String unavailableReason() {
        synchronized (OpenClUserEventSubject.class) {
            if (context == null && unavailable == null) {
                try {
                    context();
                } catch (RuntimeException | LinkageError e) {
                    unavailable = "no OpenCL device here: " + e.getMessage();
                }
            }
            return context != null ? null : unavailable;
        }
    }

    @Override
    public String name() {
        return "opencl-user-event";
    }

    @Override
    public String description() {
        return "one OpenCL user event per point (clCreateUserEvent), completed by clSetUserEventStatus(CL_COMPLETE); "
                + "the engine serves them by CALLBACK (clSetEventCallback)";
    }

    @Override
    public Stream newStream() {
        return new EventStream(context());
    }

    private static final class EventStream implements Stream {
        private final OpenClContext ctx;
        /** Events not yet completed, by index (completed ones are dropped: their points hold their own refs). */
        private final Map<Integer, OpenClUserEvent> open = new HashMap<>();
        private int count;

        EventStream(OpenClContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public Point next() {
            OpenClUserEvent event = ctx.newUserEvent();
            SyncWaiter waiter = event.newPoint().waiter(); // released by its Cleaner once unreachable
            int index;
            synchronized (this) {
                index = count++;
                open.put(index, event);
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
            OpenClUserEvent event;
            synchronized (this) {
                event = open.remove(index);
            }
            if (event != null) {
                event.complete(); // outside the lock: callbacks run inside this call
                event.close();
            }
        }

        @Override
        public void signalAll() {
            List<Integer> indices;
            synchronized (this) {
                indices = new ArrayList<>(open.keySet());
            }
            indices.forEach(this::complete);
        }

        @Override
        public long registrations() {
            return -1;
        }

        @Override
        public void close() {
            signalAll(); // OpenCL: never release a user event whose status was never set while something may wait on it
        }
    }
}
