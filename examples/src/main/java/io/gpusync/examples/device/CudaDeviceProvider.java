package io.gpusync.examples.device;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncPoint;
import io.gpusync.test.cuda.CudaWorkQueue;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * CUDA: each {@link Device#compute} request is real work ({@link CudaMatrixWork}: copy in, a matrix kernel, copy out).
 * Each unit of work is a one-thread kernel that spins on {@code %globaltimer} for the work's duration
 * ({@code ms}, else a sample of the same {@link KernelModel} the simulated device uses), launched on one of
 * {@link DeviceOptions#cudaStreams()} streams — each the non-blocking stream of a {@link CudaWorkQueue} on device 0's
 * primary context, taken in turn — followed by an event recorded on that stream, or by the next value of that
 * stream's host-memory timeline ({@link DeviceOptions#cudaPoint()}); the point is that event or value. One
 * stream would make every request wait for the ones before it (a queue, not gpusync; RESULTS.md has the figures).
 * {@code size} does not apply.
 */
public final class CudaDeviceProvider implements DeviceProvider {

    @Override
    public String backend() {
        return "cuda";
    }

    @Override
    public Device open(DeviceOptions options) {
        int n = options.cudaStreams();
        java.util.List<CudaWorkQueue> queues = new java.util.ArrayList<>(n);
        try {
            for (int i = 0; i < n; i++) {
                queues.add(CudaWorkQueue.open(0)); // SyncNotSupportedException without CUDA
            }
        } catch (RuntimeException e) {
            queues.forEach(CudaWorkQueue::close);
            throw e;
        }
        return new CuDevice(queues, options.kernels(), options.cudaPoint(), options.compute());
    }

    private static final class CuDevice implements Device {
        private final java.util.List<CudaWorkQueue> queues;
        private final KernelModel model;
        private final DeviceOptions.CudaPoint pointKind;
        private final DeviceOptions.ComputeSizing sizing;
        private final SubmissionLog log = new SubmissionLog();
        private final java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        private volatile CudaMatrixWork matrixWork; // opened on first use (buffers, kernel, calibration)
        private volatile boolean closed;

        CuDevice(java.util.List<CudaWorkQueue> queues, KernelModel model, DeviceOptions.CudaPoint pointKind,
                 DeviceOptions.ComputeSizing sizing) {
            this.queues = java.util.List.copyOf(queues);
            this.model = model;
            this.pointKind = pointKind;
            this.sizing = sizing;
        }

        @Override
        public String backend() {
            return "cuda";
        }

        @Override
        public String description() {
            return "CUDA " + queues.get(0).deviceName() + ": " + queues.size() + " streams taken in turn, a %globaltimer"
                    + " spin kernel per request (" + model + "), then " + pointKind.description();
        }

        /** Any thread; submissions to one stream are serialised by its queue (launch and record under its lock). */
        @Override
        public SyncPoint submit(Work work) {
            if (closed) {
                throw new SyncCancelledException("the CUDA device is closed");
            }
            long ns = work.duration().map(Duration::toNanos).orElseGet(() -> model.sampleNanos(ThreadLocalRandom.current()));
            long now = System.nanoTime();
            CudaWorkQueue queue = queues.get(Math.floorMod(next.getAndIncrement(), queues.size()));
            SyncPoint point;
            synchronized (queue) { // the point must follow this request's kernel, not another thread's
                queue.launchSpin(ns);
                point = pointKind.next(queue);
            }
            log.submitted(point, now);
            return point;
        }

        /**
         * Copy in, {@code matrix_chain}, copy out on the next stream in turn, then the point ({@code forBlockingWait}:
         * a recorded event). The first call loads the kernel, allocates the buffers and times the kernel.
         */
        @Override
        public Computation compute(long seed, boolean forBlockingWait) {
            if (closed) {
                throw new SyncCancelledException("the CUDA device is closed");
            }
            long now = System.nanoTime();
            Computation c = matrixWork().compute(Math.floorMod(next.getAndIncrement(), queues.size()), seed,
                    forBlockingWait, pointKind);
            log.submitted(c.point(), now);
            return c;
        }

        @Override
        public boolean computesOnDevice() {
            return true;
        }

        @Override
        public String computeDescription() {
            return "CUDA matrix_chain: input copied in from pinned memory, " + MatrixChain.N + "x" + MatrixChain.N
                    + " u32 matrix products, result copied out; " + matrixWork().calibration();
        }

        /** {@code cuEventSynchronize} on an event point (the driver call has no timeout); others: their waiter's. */
        @Override
        public void awaitBlocking(SyncPoint point, Duration timeout) {
            if (point instanceof SyncPoint.CudaEvent event) {
                matrixWork().awaitEvent(event);
            } else {
                point.waiter().await(timeout);
            }
        }

        private CudaMatrixWork matrixWork() {
            CudaMatrixWork w = matrixWork;
            if (w == null) {
                synchronized (this) {
                    if (closed) {
                        throw new SyncCancelledException("the CUDA device is closed");
                    }
                    w = matrixWork;
                    if (w == null) {
                        int perStream = Math.ceilDiv(sizing.inFlight(), queues.size()) * 2 + 8; // round robin, with room
                        matrixWork = w = CudaMatrixWork.open(queues, perStream, sizing.gpuTime(), sizing.rounds());
                    }
                }
            }
            return w;
        }

        @Override
        public java.util.OptionalLong oldestUnfinishedSubmission() {
            return log.oldestUnfinished();
        }

        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                queues.forEach(CudaWorkQueue::close); // drains the streams: the buffers are no longer in use
                if (matrixWork != null) {
                    matrixWork.close();
                }
            }
        }
    }
}
