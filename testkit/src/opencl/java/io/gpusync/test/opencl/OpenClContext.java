package io.gpusync.test.opencl;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.opencl.OpenClEvents;
import io.gpusync.opencl.OpenClQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * A small, owned OpenCL setup that produces real {@code cl_event}s: the first device of the first
 * platform, a context, one in-order command queue with profiling, and a built-in "spin" kernel whose run
 * time grows with an iteration count. For tests, the demo and benchmarks — not a general OpenCL wrapper. It uses
 * only {@code gpusync-opencl}'s public API and the OpenCL bindings.
 *
 * <p>Events it returns are {@link OpenClEvents#adopt adopted} points: each holds the reference the enqueue
 * returned. It enqueues through an {@link OpenClQueue}, so gpusync records what each command waits on — its wait
 * list and the command enqueued before it — and releases a failed one only once those can no longer notify it.
 * Commands that other code enqueues on {@link #queue()} are not seen: one of them still pending when a later command
 * of this object's fails would still list it, so enqueue through this object only, or let them terminate first.
 *
 * <p>{@link #close()} releases the kernel, program, buffer, queue and context; points keep their events (OpenCL
 * keeps the context alive while an event refers to it). Close only when no enqueued command still waits on a
 * {@link OpenClUserEvent} whose status is unset — OpenCL leaves that undefined ({@link OpenClUserEvent#close()}
 * sets one).
 *
 * <p>Thread-safe: enqueues are serialised (a kernel's arguments are per-kernel state).
 */
public final class OpenClContext implements AutoCloseable {
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
    private final OpenClQueue commands;
    private boolean closed;

    private OpenClContext(MemorySegment platform, MemorySegment device, MemorySegment context,
                          MemorySegment queue, String deviceName) {
        this.platform = platform;
        this.device = device;
        this.context = context;
        this.queue = queue;
        this.deviceName = deviceName;
        this.commands = OpenClQueue.borrow(queue);
    }

    /**
     * Opens the first GPU device of any platform, else the first device of any type.
     *
     * @throws SyncNotSupportedException if OpenCL, a platform or a device is missing
     * @throws io.gpusync.SyncException  if a driver call fails
     */
    public static OpenClContext createDefault() {
        ClChecks.requireLibrary();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment count = a.allocate(ValueLayout.JAVA_INT);
            int rc = OpenCl.clGetPlatformIDs(0, MemorySegment.NULL, count);
            if (rc == ClChecks.CL_PLATFORM_NOT_FOUND_KHR || rc == OpenCl.CL_SUCCESS() && count.get(ValueLayout.JAVA_INT, 0) == 0) {
                throw new SyncNotSupportedException(BackendKind.OPENCL, "no OpenCL platform (ICD) is installed");
            }
            ClChecks.check(rc, "clGetPlatformIDs", "the ICD loader");
            int platformCount = count.get(ValueLayout.JAVA_INT, 0);
            MemorySegment platforms = a.allocate(ValueLayout.ADDRESS, platformCount);
            ClChecks.check(OpenCl.clGetPlatformIDs(platformCount, platforms, MemorySegment.NULL), "clGetPlatformIDs",
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
            ClChecks.check(err.get(ValueLayout.JAVA_INT, 0), "clCreateContext", name);

            MemorySegment props = a.allocate(ValueLayout.JAVA_LONG, 3);
            props.setAtIndex(ValueLayout.JAVA_LONG, 0, OpenCl.CL_QUEUE_PROPERTIES());
            props.setAtIndex(ValueLayout.JAVA_LONG, 1, OpenCl.CL_QUEUE_PROFILING_ENABLE());
            props.setAtIndex(ValueLayout.JAVA_LONG, 2, 0);
            MemorySegment queue = OpenCl.clCreateCommandQueueWithProperties(context, device, props, err);
            int qrc = err.get(ValueLayout.JAVA_INT, 0);
            if (qrc != OpenCl.CL_SUCCESS()) {
                OpenCl.clReleaseContext(context);
                throw ClChecks.callFailed(qrc, "clCreateCommandQueueWithProperties", name);
            }
            return new OpenClContext(platform, device, context, queue, name);
        }
    }

    private static String deviceString(Arena a, MemorySegment device, int param) {
        MemorySegment size = a.allocate(ValueLayout.JAVA_LONG);
        ClChecks.check(OpenCl.clGetDeviceInfo(device, param, 0, MemorySegment.NULL, size), "clGetDeviceInfo", "device");
        MemorySegment value = a.allocate(size.get(ValueLayout.JAVA_LONG, 0) + 1);
        ClChecks.check(OpenCl.clGetDeviceInfo(device, param, value.byteSize(), value, MemorySegment.NULL),
                "clGetDeviceInfo", "device");
        return value.getString(0);
    }

    /** The {@code cl_platform_id}. */
    public MemorySegment platform() {
        return platform;
    }

    /** The {@code cl_device_id}. */
    public MemorySegment device() {
        return device;
    }

    /** The {@code cl_context}. */
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
            ClChecks.check(OpenCl.clSetKernelArg(kernel, 0, ValueLayout.ADDRESS.byteSize(), mem), "clSetKernelArg(0)", "gpusync_spin");
            MemorySegment n = a.allocate(ValueLayout.JAVA_INT);
            n.set(ValueLayout.JAVA_INT, 0, iterations);
            ClChecks.check(OpenCl.clSetKernelArg(kernel, 1, Integer.BYTES, n), "clSetKernelArg(1)", "gpusync_spin");
            MemorySegment global = a.allocate(ValueLayout.JAVA_LONG);
            global.set(ValueLayout.JAVA_LONG, 0, 1);
            return commands.enqueue("clEnqueueNDRangeKernel(gpusync_spin)", (count, list, out) ->
                    OpenCl.clEnqueueNDRangeKernel(queue, kernel, 1, MemorySegment.NULL, global, MemorySegment.NULL,
                            count, list, out), waitFor);
        }
    }

    /** Enqueues a marker after {@code waitFor} (or after everything queued before, if empty), flushes, returns its event. */
    public synchronized SyncPoint.OpenCl enqueueMarker(SyncPoint.OpenCl... waitFor) {
        checkOpen();
        return commands.enqueue("clEnqueueMarkerWithWaitList",
                (count, list, out) -> OpenCl.clEnqueueMarkerWithWaitList(queue, count, list, out), waitFor);
    }

    /** Blocks until everything enqueued so far is done ({@code clFinish}). */
    public void finish() {
        checkOpen();
        ClChecks.check(OpenCl.clFinish(queue), "clFinish", deviceName);
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
            ClChecks.check(err.get(ValueLayout.JAVA_INT, 0), "clCreateProgramWithSource", "gpusync_spin");
            MemorySegment devices = a.allocate(ValueLayout.ADDRESS);
            devices.set(ValueLayout.ADDRESS, 0, device);
            int rc = OpenCl.clBuildProgram(program, 1, devices, a.allocateFrom(""), MemorySegment.NULL, MemorySegment.NULL);
            if (rc != OpenCl.CL_SUCCESS()) {
                throw ClChecks.callFailed(rc, "clBuildProgram", "gpusync_spin; build log:\n" + buildLog(a));
            }
            kernel = OpenCl.clCreateKernel(program, a.allocateFrom("gpusync_spin"), err);
            ClChecks.check(err.get(ValueLayout.JAVA_INT, 0), "clCreateKernel", "gpusync_spin");
            buffer = OpenCl.clCreateBuffer(context, OpenCl.CL_MEM_READ_WRITE(), Integer.BYTES, MemorySegment.NULL, err);
            ClChecks.check(err.get(ValueLayout.JAVA_INT, 0), "clCreateBuffer", "gpusync_spin output");
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
