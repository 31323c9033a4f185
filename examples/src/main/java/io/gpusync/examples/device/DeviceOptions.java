package io.gpusync.examples.device;

import io.gpusync.SyncPoint;
import io.gpusync.test.cuda.CudaWorkQueue;

import java.time.Duration;

/**
 * What a {@link DeviceProvider} needs to open a device.
 *
 * @param kernels       the simulated device's kernel-duration model
 * @param queues        the simulated device's in-order queues
 * @param allowSoftware whether a CPU implementation of a GPU API (PoCL, lavapipe, llvmpipe) counts as a
 *                      device; false for automatic discovery (which then prefers gpusync's own CPU
 *                      timeline), true when a backend is asked for by name
 * @param streams       CUDA: the streams requests are spread over; 0 sizes it to the GPU
 *                      ({@link #cudaStreams()})
 * @param cudaPoint     CUDA: what each request's point is
 * @param compute       how {@link Device#compute} work is sized
 */
public record DeviceOptions(KernelModel kernels, int queues, boolean allowSoftware, int streams, CudaPoint cudaPoint,
                            ComputeSizing compute) {
    /**
     * The size of one {@link Device#compute} request where it runs on the device (CUDA).
     *
     * @param gpuTime  the GPU time one request should take: the device times its kernel and picks the number of
     *                 matrix products accordingly (when {@code rounds} is 0)
     * @param rounds   the number of products per request, 0 to size them from {@code gpuTime}
     * @param inFlight the most requests in flight the device keeps buffers for (spread over its streams)
     */
    public record ComputeSizing(Duration gpuTime, int rounds, int inFlight) {
        /** 200 µs of GPU time per request, buffers for 4,096 requests in flight. */
        public static final ComputeSizing DEFAULT = new ComputeSizing(Duration.ofNanos(200_000), 0, 4096);

        public ComputeSizing {
            if (!gpuTime.isPositive() || rounds < 0 || inFlight < 1) {
                throw new IllegalArgumentException("need gpuTime > 0, rounds ≥ 0, inFlight ≥ 1: " + gpuTime + ", "
                        + rounds + ", " + inFlight);
            }
        }
    }

    /**
     * What the CUDA device hands out per request: an event recorded after the kernel ({@code cuEventCreate} +
     * {@code cuEventRecord}, destroyed after the wait; probed with {@code cuEventQuery}), or the next value of the
     * stream's host-memory timeline ({@code cuStreamWriteValue64} into pinned memory; probed by reading that memory,
     * no driver call). Both are sync points a user holds; the timeline takes fewer driver calls per request.
     */
    public enum CudaPoint {
        EVENT("a recorded CUevent") {
            @Override
            public SyncPoint next(CudaWorkQueue queue) {
                return queue.recordEvent();
            }
        },
        TIMELINE("the next value of the stream's host-memory timeline") {
            @Override
            public SyncPoint next(CudaWorkQueue queue) {
                return queue.advanceTimeline();
            }
        };

        private final String description;

        CudaPoint(String description) {
            this.description = description;
        }

        /** The point that follows everything submitted to {@code queue} so far (the caller serialises submissions). */
        public abstract SyncPoint next(CudaWorkQueue queue);

        /** What the point is, in words. */
        public String description() {
            return description;
        }

        /** The kind named {@code name} on the command line ({@code event} or {@code timeline}). */
        public static CudaPoint named(String name) {
            for (CudaPoint p : values()) {
                if (p.name().equalsIgnoreCase(name)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("--cuda-point must be event or timeline: " + name);
        }
    }

    /** Options with CUDA events as points. */
    public DeviceOptions(KernelModel kernels, int queues, boolean allowSoftware, int streams) {
        this(kernels, queues, allowSoftware, streams, CudaPoint.EVENT);
    }

    /** Options with the default {@link ComputeSizing}. */
    public DeviceOptions(KernelModel kernels, int queues, boolean allowSoftware, int streams, CudaPoint cudaPoint) {
        this(kernels, queues, allowSoftware, streams, cudaPoint, ComputeSizing.DEFAULT);
    }

    /** The most CUDA streams a demo device opens. */
    public static final int MAX_STREAMS = 128;
    /** The defaults: {@link KernelModel#DEFAULT}, 4 queues, hardware devices only, CUDA streams sized to the GPU. */
    public static final DeviceOptions DEFAULT = new DeviceOptions(KernelModel.DEFAULT, 4, false, 0);

    public DeviceOptions withAllowSoftware(boolean allow) {
        return new DeviceOptions(kernels, queues, allow, streams, cudaPoint, compute);
    }

    /**
     * The CUDA streams to open: {@link #streams} if set, else one per hardware work queue the driver gives a process
     * — {@code CUDA_DEVICE_MAX_CONNECTIONS} (1–32) if set, else its default, 8. More streams than that share
     * hardware queues, and kernels of streams that share one can wait for each other.
     */
    public int cudaStreams() {
        if (streams > 0) {
            return streams;
        }
        try {
            String v = System.getenv("CUDA_DEVICE_MAX_CONNECTIONS");
            return v == null ? 8 : Math.max(1, Math.min(32, Integer.parseInt(v.trim())));
        } catch (NumberFormatException e) {
            return 8;
        }
    }
}
