package io.gpusync.examples.device;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncPoint;
import io.gpusync.cuda.CudaProducers.CudaWorkQueue;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * CUDA: each unit of work is a one-thread kernel that spins on {@code %globaltimer} for the work's duration
 * ({@code ms}, else a sample of the same {@link KernelModel} the simulated device uses), launched on the one
 * non-blocking stream of a {@link CudaWorkQueue} (device 0's primary context), followed by an event recorded
 * on that stream; the point is that event. {@code size} does not apply.
 */
public final class CudaDeviceProvider implements DeviceProvider {

    @Override
    public String backend() {
        return "cuda";
    }

    @Override
    public Device open(DeviceOptions options) {
        return new CuDevice(CudaWorkQueue.open(0), options.kernels()); // SyncNotSupportedException without CUDA
    }

    private static final class CuDevice implements Device {
        private final CudaWorkQueue queue;
        private final KernelModel model;
        private final SubmissionLog log = new SubmissionLog();
        private boolean closed;

        CuDevice(CudaWorkQueue queue, KernelModel model) {
            this.queue = queue;
            this.model = model;
        }

        @Override
        public String backend() {
            return "cuda";
        }

        @Override
        public String description() {
            return "CUDA " + queue.deviceName() + ": one stream, a %globaltimer spin kernel per request (" + model
                    + "), then a recorded CUevent";
        }

        @Override
        public synchronized SyncPoint submit(Work work) {
            if (closed) {
                throw new SyncCancelledException("the CUDA device is closed");
            }
            long ns = work.duration().map(Duration::toNanos).orElseGet(() -> model.sampleNanos(ThreadLocalRandom.current()));
            long now = System.nanoTime();
            queue.launchSpin(ns);
            SyncPoint point = queue.recordEvent();
            log.submitted(point, now);
            return point;
        }

        @Override
        public java.util.OptionalLong oldestUnfinishedSubmission() {
            return log.oldestUnfinished();
        }

        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                queue.close();
            }
        }
    }
}
