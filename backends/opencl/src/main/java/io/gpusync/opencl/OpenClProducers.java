package io.gpusync.opencl;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Producers of OpenCL work and events for gpusync's own tests, the demo and the benchmarks: they make GPU work and
 * signal the primitives that the sync points of this package wait on. They are not part of the synchronisation
 * contract (applications bring their own OpenCL work); they live here, in one clearly named holder, because the
 * tests and benchmarks of other modules share them. Not instantiable; each nested class states its own threading,
 * blocking and lifetime rules.
 */
public final class OpenClProducers {
    private OpenClProducers() {
    }

    /**
     * A small, owned OpenCL setup that produces real {@code cl_event}s: the first device of the first
     * platform, a context, one in-order command queue with profiling, and a built-in "spin" kernel whose run
     * time grows with an iteration count. For tests, the demo and benchmarks — not a general OpenCL wrapper.
     *
     * <p>Events it returns are {@link OpenClEvents#adopt adopted} points: each holds the reference the enqueue
     * returned. gpusync records what each command waits on — its wait list and the command enqueued before it — so
     * that it releases a failed one only once those can no longer notify it ({@link OpenClEvents}). Commands that other
     * code enqueues on {@link #queue()} are not seen: one of them still pending when a later command of this object's
     * fails would still list it, so enqueue through this object only, or let them terminate first.
     *
     * <p>{@link #close()} releases the kernel, program, buffer, queue and context; points keep their events (OpenCL
     * keeps the context alive while an event refers to it). Close only when no enqueued command still waits on a
     * {@link OpenClUserEvent} whose status is unset — OpenCL leaves that undefined ({@link OpenClUserEvent#close()}
     * sets one).
     *
     * <p>Thread-safe: enqueues are serialised (a kernel's arguments are per-kernel state).
     */
    public static final class OpenClContext implements AutoCloseable {
        /** {@code iterations} rounds of a 32-bit LCG in one work-item: serial, not optimisable away. */
        static final String SPIN_SOURCE = """
                __kernel void gpusync_spin(__global uint *out, uint iterations) {
                    uint x = get_global_id(0) + 1u;
                    for (uint i = 0; i < iterations; i++) {
                        x = x * 1664525u + 1013904223u;
                    }
                    out[get_global_id(0)] = x;
                }
                """;

        private final MemorySegment platform;
        private final MemorySegment device;
        private final MemorySegment context;
        private final MemorySegment queue;
        private final String deviceName;
        private MemorySegment program = MemorySegment.NULL;
        private MemorySegment kernel = MemorySegment.NULL;
        private MemorySegment buffer = MemorySegment.NULL;
        private ClEventRelease.Ref last; // the command enqueued last (no reference): the next one waits on it
        private boolean closed;

        private OpenClContext(MemorySegment platform, MemorySegment device, MemorySegment context,
                              MemorySegment queue, String deviceName) {
            this.platform = platform;
            this.device = device;
            this.context = context;
            this.queue = queue;
            this.deviceName = deviceName;
        }

        /**
         * Opens the first GPU device of any platform, else the first device of any type.
         *
         * @throws SyncNotSupportedException if OpenCL, a platform or a device is missing
         * @throws io.gpusync.SyncException  if a driver call fails
         */
        public static OpenClContext createDefault() {
            Cl.require();
            try (Arena a = Arena.ofConfined()) {
                MemorySegment count = a.allocate(ValueLayout.JAVA_INT);
                int rc = OpenCl.clGetPlatformIDs(0, MemorySegment.NULL, count);
                if (rc == ClErrors.CL_PLATFORM_NOT_FOUND_KHR || rc == OpenCl.CL_SUCCESS() && count.get(ValueLayout.JAVA_INT, 0) == 0) {
                    throw new SyncNotSupportedException(BackendKind.OPENCL, "no OpenCL platform (ICD) is installed");
                }
                ClErrors.check(rc, "clGetPlatformIDs", "the ICD loader");
                int platformCount = count.get(ValueLayout.JAVA_INT, 0);
                MemorySegment platforms = a.allocate(ValueLayout.ADDRESS, platformCount);
                ClErrors.check(OpenCl.clGetPlatformIDs(platformCount, platforms, MemorySegment.NULL), "clGetPlatformIDs",
                        "the ICD loader");
                // a GPU anywhere beats the first platform's first device (often a CPU implementation such as PoCL)
                MemorySegment platform = MemorySegment.NULL;
                MemorySegment devices = a.allocate(ValueLayout.ADDRESS);
                for (long type : new long[] {Integer.toUnsignedLong(OpenCl.CL_DEVICE_TYPE_GPU()),
                        Integer.toUnsignedLong(OpenCl.CL_DEVICE_TYPE_ALL())}) {
                    for (int i = 0; i < platformCount && platform.equals(MemorySegment.NULL); i++) {
                        MemorySegment candidate = platforms.getAtIndex(ValueLayout.ADDRESS, i);
                        if (OpenCl.clGetDeviceIDs(candidate, type, 1, devices, MemorySegment.NULL) == OpenCl.CL_SUCCESS()) {
                            platform = candidate;
                        }
                    }
                }
                if (platform.equals(MemorySegment.NULL)) {
                    throw new SyncNotSupportedException(BackendKind.OPENCL, "no OpenCL platform has a device");
                }
                MemorySegment device = devices.get(ValueLayout.ADDRESS, 0);
                String name = deviceString(a, device, OpenCl.CL_DEVICE_NAME());

                MemorySegment err = a.allocate(ValueLayout.JAVA_INT);
                MemorySegment context = OpenCl.clCreateContext(MemorySegment.NULL, 1, devices, MemorySegment.NULL,
                        MemorySegment.NULL, err);
                ClErrors.check(err.get(ValueLayout.JAVA_INT, 0), "clCreateContext", name);

                MemorySegment props = a.allocate(ValueLayout.JAVA_LONG, 3);
                props.setAtIndex(ValueLayout.JAVA_LONG, 0, OpenCl.CL_QUEUE_PROPERTIES());
                props.setAtIndex(ValueLayout.JAVA_LONG, 1, OpenCl.CL_QUEUE_PROFILING_ENABLE());
                props.setAtIndex(ValueLayout.JAVA_LONG, 2, 0);
                MemorySegment queue = OpenCl.clCreateCommandQueueWithProperties(context, device, props, err);
                int qrc = err.get(ValueLayout.JAVA_INT, 0);
                if (qrc != OpenCl.CL_SUCCESS()) {
                    OpenCl.clReleaseContext(context);
                    throw ClErrors.callFailed(qrc, "clCreateCommandQueueWithProperties", name);
                }
                return new OpenClContext(platform, device, context, queue, name);
            }
        }

        private static String deviceString(Arena a, MemorySegment device, int param) {
            MemorySegment size = a.allocate(ValueLayout.JAVA_LONG);
            ClErrors.check(OpenCl.clGetDeviceInfo(device, param, 0, MemorySegment.NULL, size), "clGetDeviceInfo", "device");
            MemorySegment value = a.allocate(size.get(ValueLayout.JAVA_LONG, 0) + 1);
            ClErrors.check(OpenCl.clGetDeviceInfo(device, param, value.byteSize(), value, MemorySegment.NULL),
                    "clGetDeviceInfo", "device");
            return value.getString(0);
        }

        public MemorySegment platform() {
            return platform;
        }

        public MemorySegment device() {
            return device;
        }

        public MemorySegment context() {
            return context;
        }

        /** The in-order, profiling-enabled command queue. */
        public MemorySegment queue() {
            return queue;
        }

        /** {@code CL_DEVICE_NAME}, e.g. {@code cpu-haswell-...} on PoCL. */
        public String deviceName() {
            return deviceName;
        }

        /** A new {@link OpenClUserEvent} in this context. */
        public OpenClUserEvent newUserEvent() {
            checkOpen();
            return OpenClUserEvent.create(context);
        }

        /**
         * Enqueues the spin kernel (one work-item, {@code iterations} serial LCG rounds; a few hundred million
         * per second on a CPU device) after {@code waitFor}, flushes, and returns its event. The first call
         * builds the program (PoCL: LLVM compiles it; tens to hundreds of milliseconds, then cached).
         *
         * @throws io.gpusync.SyncException if the build or the enqueue fails (the build log is in the message)
         */
        public synchronized SyncPoint.OpenCl enqueueSpin(int iterations, SyncPoint.OpenCl... waitFor) {
            checkOpen();
            if (iterations < 0) {
                throw new SyncInvalidArgumentException(BackendKind.OPENCL, "iterations must be ≥ 0: " + iterations);
            }
            buildSpinKernel();
            try (Arena a = Arena.ofConfined()) {
                MemorySegment mem = a.allocate(ValueLayout.ADDRESS);
                mem.set(ValueLayout.ADDRESS, 0, buffer);
                ClErrors.check(OpenCl.clSetKernelArg(kernel, 0, ValueLayout.ADDRESS.byteSize(), mem), "clSetKernelArg(0)", "gpusync_spin");
                MemorySegment n = a.allocate(ValueLayout.JAVA_INT);
                n.set(ValueLayout.JAVA_INT, 0, iterations);
                ClErrors.check(OpenCl.clSetKernelArg(kernel, 1, Integer.BYTES, n), "clSetKernelArg(1)", "gpusync_spin");
                MemorySegment global = a.allocate(ValueLayout.JAVA_LONG);
                global.set(ValueLayout.JAVA_LONG, 0, 1);
                return enqueue(a, waitFor, "clEnqueueNDRangeKernel(gpusync_spin)", (count, list, out) ->
                        OpenCl.clEnqueueNDRangeKernel(queue, kernel, 1, MemorySegment.NULL, global, MemorySegment.NULL,
                                count, list, out));
            }
        }

        /** Enqueues a marker after {@code waitFor} (or after everything queued before, if empty), flushes, returns its event. */
        public synchronized SyncPoint.OpenCl enqueueMarker(SyncPoint.OpenCl... waitFor) {
            checkOpen();
            try (Arena a = Arena.ofConfined()) {
                return enqueue(a, waitFor, "clEnqueueMarkerWithWaitList",
                        (count, list, out) -> OpenCl.clEnqueueMarkerWithWaitList(queue, count, list, out));
            }
        }

        /** Blocks until everything enqueued so far is done ({@code clFinish}). */
        public void finish() {
            checkOpen();
            ClErrors.check(OpenCl.clFinish(queue), "clFinish", deviceName);
        }

        @FunctionalInterface
        private interface Enqueue {
            int call(int count, MemorySegment list, MemorySegment out);
        }

        /**
         * Enqueues, flushes and adopts the new event as a point. gpusync records what the command waits on — each
         * event of {@code waitFor}, and the command enqueued before it on this in-order queue — so that its last
         * reference to a command that fails is released only once those can no longer notify it
         * ({@link ClEventRelease}).
         */
        private SyncPoint.OpenCl enqueue(Arena a, SyncPoint.OpenCl[] waitFor, String call, Enqueue enqueue) {
            List<OpenClEventWaiter> entered = new ArrayList<>();
            List<ClEventRelease.Ref> waitsOn = new ArrayList<>();
            try {
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
                ClErrors.check(enqueue.call(waitFor.length, list, out), call, deviceName);
                MemorySegment event = out.get(ValueLayout.ADDRESS, 0);
                int rc = OpenCl.clFlush(queue);
                ClEventRelease.Ref command = ClEventRelease.adopt(event, "cl_event " + Cl.hex(event));
                ClEventRelease.waitsOn(command, waitsOn);
                waitsOn.clear();
                last = command;
                SyncPoint.OpenCl point = OpenClEvents.point(command);
                ClErrors.check(rc, "clFlush", deviceName);
                return point;
            } finally {
                waitsOn.forEach(ClEventRelease::drop); // a failure half-way: what was taken goes again
                entered.forEach(OpenClEventWaiter::exit);
            }
        }

        private void buildSpinKernel() {
            if (!kernel.equals(MemorySegment.NULL)) {
                return;
            }
            try (Arena a = Arena.ofConfined()) {
                MemorySegment err = a.allocate(ValueLayout.JAVA_INT);
                byte[] src = SPIN_SOURCE.getBytes(StandardCharsets.UTF_8);
                MemorySegment strings = a.allocate(ValueLayout.ADDRESS);
                strings.set(ValueLayout.ADDRESS, 0, a.allocateFrom(SPIN_SOURCE));
                MemorySegment lengths = a.allocate(ValueLayout.JAVA_LONG);
                lengths.set(ValueLayout.JAVA_LONG, 0, src.length);
                program = OpenCl.clCreateProgramWithSource(context, 1, strings, lengths, err);
                ClErrors.check(err.get(ValueLayout.JAVA_INT, 0), "clCreateProgramWithSource", "gpusync_spin");
                MemorySegment devices = a.allocate(ValueLayout.ADDRESS);
                devices.set(ValueLayout.ADDRESS, 0, device);
                int rc = OpenCl.clBuildProgram(program, 1, devices, a.allocateFrom(""), MemorySegment.NULL, MemorySegment.NULL);
                if (rc != OpenCl.CL_SUCCESS()) {
                    throw ClErrors.callFailed(rc, "clBuildProgram", "gpusync_spin; build log:\n" + buildLog(a));
                }
                kernel = OpenCl.clCreateKernel(program, a.allocateFrom("gpusync_spin"), err);
                ClErrors.check(err.get(ValueLayout.JAVA_INT, 0), "clCreateKernel", "gpusync_spin");
                buffer = OpenCl.clCreateBuffer(context, OpenCl.CL_MEM_READ_WRITE(), Integer.BYTES, MemorySegment.NULL, err);
                ClErrors.check(err.get(ValueLayout.JAVA_INT, 0), "clCreateBuffer", "gpusync_spin output");
            }
        }

        private String buildLog(Arena a) {
            MemorySegment size = a.allocate(ValueLayout.JAVA_LONG);
            if (OpenCl.clGetProgramBuildInfo(program, device, OpenCl.CL_PROGRAM_BUILD_LOG(), 0, MemorySegment.NULL, size)
                    != OpenCl.CL_SUCCESS()) {
                return "(unavailable)";
            }
            MemorySegment log = a.allocate(size.get(ValueLayout.JAVA_LONG, 0) + 1);
            if (OpenCl.clGetProgramBuildInfo(program, device, OpenCl.CL_PROGRAM_BUILD_LOG(), log.byteSize(), log,
                    MemorySegment.NULL) != OpenCl.CL_SUCCESS()) {
                return "(unavailable)";
            }
            return log.getString(0);
        }

        private synchronized void checkOpen() {
            if (closed) {
                throw new IllegalStateException("OpenClContext on " + deviceName + " is closed");
            }
        }

        /** Releases kernel, program, buffer, queue and context (pending commands still complete). Idempotent. */
        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            if (!kernel.equals(MemorySegment.NULL)) {
                OpenCl.clReleaseKernel(kernel);
            }
            if (!program.equals(MemorySegment.NULL)) {
                OpenCl.clReleaseProgram(program);
            }
            if (!buffer.equals(MemorySegment.NULL)) {
                OpenCl.clReleaseMemObject(buffer);
            }
            OpenCl.clReleaseCommandQueue(queue);
            OpenCl.clReleaseContext(context);
        }

        @Override
        public String toString() {
            return "OpenClContext[" + deviceName + (closed ? ", closed" : "") + "]";
        }
    }

    /**
     * A host-controlled OpenCL event ({@code clCreateUserEvent}): the host decides when it completes
     * ({@link #complete()}) or fails ({@link #fail(int)}), and commands that list it in their wait list start
     * only then. The test and demo producer for {@code cl_event} waits; also a way to gate queued GPU work on a
     * host decision.
     *
     * <p>Its status can be set once; a second {@code complete}/{@code fail} is a driver error
     * ({@code CL_INVALID_OPERATION}). Points from {@link #newPoint()} hold references of their own, so they stay
     * valid after {@link #close()}. {@link #close()} fails a user event whose status was never set with
     * {@link #CLOSED_UNSET}, so no command waits on it for ever (OpenCL leaves releasing a queue, a context or a
     * memory object undefined while a command waits on an unset user event, and PoCL's {@code clFinish} would
     * never return). One left to the garbage collector unclosed only drops its reference.
     *
     * <p>Thread-safe. Status changes ({@code complete}, {@code fail}, and {@code close} of an unset event) of every
     * user event made here run one at a time, so a call may block briefly behind another thread's: two commands'
     * dependencies ending at once on two threads, one failing, crash PoCL 3.1. Set the statuses of user events you
     * create yourself one at a time too.
     */
    public static final class OpenClUserEvent implements AutoCloseable {
        /**
         * The status {@link #close()} sets on a user event whose status was never set: waits on it fail with a
         * {@link io.gpusync.SyncException} carrying this code, and the commands waiting on it are aborted. Chosen
         * outside the ranges of OpenCL's error codes and its extensions'.
         */
        public static final int CLOSED_UNSET = -990_001;

        private final MemorySegment event;
        private final ClEventRelease.Ref ref;
        private final NativeAnchor.Claim claim;
        private final String what;

        private OpenClUserEvent(MemorySegment event, String what) {
            this.event = event;
            this.what = what;
            this.ref = ClEventRelease.adopt(event, what);
            this.claim = NativeAnchor.adopt(what, ClEventRelease.releaser(ref)).claim(this);
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
            return claim.call(() -> OpenClEvents.borrow(event));
        }

        /**
         * Sets the status to {@code CL_COMPLETE}. Listeners registered on it run on this thread, inside the
         * driver call (PoCL). Status changes of all user events made here happen one at a time: a call may wait for
         * another thread's.
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
            claim.run(() -> ClErrors.check(setStatusAlone(status), "clSetUserEventStatus(" + status + ")", what));
        }

        /**
         * Sets the status with no other user event's status change in flight. PoCL (3.1) can both fail and run a command
         * whose dependencies end at once on two threads, one failing, and then uses the freed command; one change at a
         * time closes that window. Reentrant: listeners running inside the call may end other user events.
         */
        private int setStatusAlone(int status) {
            synchronized (OpenClUserEvent.class) {
                return ClEventRelease.call(ref, () -> OpenCl.clSetUserEventStatus(event, status));
            }
        }

        /**
         * Drops this object's reference (points keep theirs). A status never set is set to {@link #CLOSED_UNSET}
         * first, on this thread: listeners registered on the event, and the failure of the commands waiting on it,
         * run inside this call (PoCL). Idempotent.
         */
        @Override
        public void close() {
            try {
                claim.run(() -> {
                    if (Cl.statusOr(event, OpenCl.CL_COMPLETE()) > OpenCl.CL_COMPLETE()) {
                        // CL_INVALID_OPERATION: set meanwhile by another thread, which is as good
                        setStatusAlone(CLOSED_UNSET);
                    }
                });
            } catch (IllegalStateException closedMeanwhile) {
                return;
            }
            claim.close();
        }

        @Override
        public String toString() {
            return "OpenClUserEvent[" + what + (claim.isClosed() ? ", closed" : "") + "]";
        }
    }
}
