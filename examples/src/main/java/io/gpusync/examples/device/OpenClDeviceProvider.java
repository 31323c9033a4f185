package io.gpusync.examples.device;

import io.gpusync.BackendKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.test.opencl.OpenClContext;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * OpenCL: each unit of work is gpusync's tiny spin kernel ({@link OpenClContext#enqueueSpin}) on one in-order
 * queue, and the point is that kernel's {@code cl_event} (awaited by {@code clSetEventCallback}, the
 * {@code CALLBACK} path, handed to the server's event loops). {@code size} sets the kernel's iterations
 * ({@value #ITERATIONS_PER_SIZE} per unit); {@code ms} does not apply.
 */
public final class OpenClDeviceProvider implements DeviceProvider {
    static final int ITERATIONS_PER_SIZE = 1_000;

    @Override
    public String backend() {
        return "opencl";
    }

    @Override
    public Device open(DeviceOptions options) {
        OpenClContext cl = OpenClContext.createDefault();
        try {
            long type = deviceType(cl.device());
            boolean gpu = (type & Integer.toUnsignedLong(OpenCl.CL_DEVICE_TYPE_GPU())) != 0;
            if (!gpu && !options.allowSoftware()) {
                throw new SyncNotSupportedException(BackendKind.OPENCL, "the first OpenCL device, " + cl.deviceName()
                        + ", is not a GPU (use --backend opencl to run on it anyway)");
            }
            return new ClDevice(cl, gpu);
        } catch (RuntimeException | Error e) {
            cl.close();
            throw e;
        }
    }

    private static long deviceType(MemorySegment device) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment type = a.allocate(ValueLayout.JAVA_LONG);
            int rc = OpenCl.clGetDeviceInfo(device, OpenCl.CL_DEVICE_TYPE(), Long.BYTES, type, MemorySegment.NULL);
            return rc == OpenCl.CL_SUCCESS() ? type.get(ValueLayout.JAVA_LONG, 0) : 0;
        }
    }

    private static final class ClDevice implements Device {
        private final OpenClContext cl;
        private final boolean gpu;
        private final SubmissionLog log = new SubmissionLog();
        private volatile boolean closed;

        ClDevice(OpenClContext cl, boolean gpu) {
            this.cl = cl;
            this.gpu = gpu;
        }

        @Override
        public String backend() {
            return "opencl";
        }

        @Override
        public String description() {
            return "OpenCL " + (gpu ? "GPU" : "non-GPU device") + " " + cl.deviceName() + ": one in-order queue, "
                    + ITERATIONS_PER_SIZE + "-iteration spin kernel per size unit, cl_event per request";
        }

        @Override
        public SyncPoint submit(Work work) {
            if (closed) {
                throw new SyncCancelledException("the OpenCL device is closed");
            }
            long now = System.nanoTime();
            SyncPoint point = cl.enqueueSpin((int) Math.min(Integer.MAX_VALUE, (long) work.size() * ITERATIONS_PER_SIZE));
            log.submitted(point, now);
            return point;
        }

        @Override
        public java.util.OptionalLong oldestUnfinishedSubmission() {
            return log.oldestUnfinished();
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                cl.finish();
                cl.close();
            }
        }
    }
}
