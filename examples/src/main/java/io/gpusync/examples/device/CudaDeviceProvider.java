package io.gpusync.examples.device;

import io.gpusync.BackendKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.cuda.CudaEvents;
import io.gpusync.cuda.CudaResults;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * CUDA: each unit of work is a one-thread kernel that spins on {@code %globaltimer} for the work's duration
 * ({@code ms}, else a sample of the same {@link KernelModel} the simulated device uses), launched on one
 * non-blocking stream of device 0's primary context, followed by an event recorded on that stream
 * ({@link CudaEvents#record}); the point is that event. The kernel is hand-written PTX
 * ({@code demo_kernels.ptx}), JIT-compiled by the driver. {@code size} does not apply.
 */
public final class CudaDeviceProvider implements DeviceProvider {
    private static final String KERNEL = "gpusync_demo_spin_ns";

    @Override
    public String backend() {
        return "cuda";
    }

    @Override
    public Device open(DeviceOptions options) {
        try {
            SymbolLookup.libraryLookup("libcuda.so.1", Arena.global());
        } catch (IllegalArgumentException absent) {
            throw new SyncNotSupportedException(BackendKind.CUDA, "libcuda.so.1 is not installed: no CUDA driver here");
        }
        check(Cuda.cuInit(0), "cuInit");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment count = a.allocate(ValueLayout.JAVA_INT);
            check(Cuda.cuDeviceGetCount(count), "cuDeviceGetCount");
            if (count.get(ValueLayout.JAVA_INT, 0) < 1) {
                throw new SyncNotSupportedException(BackendKind.CUDA, "the CUDA driver sees no device");
            }
            MemorySegment name = a.allocate(256);
            check(Cuda.cuDeviceGetName(name, 256, 0), "cuDeviceGetName");
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuDevicePrimaryCtxRetain(p, 0), "cuDevicePrimaryCtxRetain(0)");
            MemorySegment ctx = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
            try {
                check(Cuda.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent");
                try {
                    check(Cuda.cuStreamCreate(p, Cuda.CU_STREAM_NON_BLOCKING()), "cuStreamCreate");
                    MemorySegment stream = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                    check(Cuda.cuModuleLoadData(p, Arena.global().allocateFrom(ptx())), "cuModuleLoadData(demo_kernels.ptx)");
                    MemorySegment module = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                    check(Cuda.cuModuleGetFunction(p, module, a.allocateFrom(KERNEL)), "cuModuleGetFunction(" + KERNEL + ")");
                    MemorySegment function = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                    return new CuDevice(name.getString(0), ctx, stream, module, function, options.kernels());
                } finally {
                    Cuda.cuCtxPopCurrent_v2(a.allocate(ValueLayout.ADDRESS));
                }
            } catch (RuntimeException | Error e) {
                Cuda.cuDevicePrimaryCtxRelease_v2(0);
                throw e;
            }
        }
    }

    private static void check(int result, String what) {
        if (result != 0) {
            throw CudaResults.exception(result, what);
        }
    }

    private static String ptx() {
        try (InputStream in = CudaDeviceProvider.class.getResourceAsStream("demo_kernels.ptx")) {
            if (in == null) {
                throw new IllegalStateException("demo_kernels.ptx is missing from the class path");
            }
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static final class CuDevice implements Device {
        private final String name;
        private final MemorySegment ctx;
        private final MemorySegment stream;
        private final MemorySegment module;
        private final MemorySegment function;
        private final KernelModel model;
        private boolean closed;

        CuDevice(String name, MemorySegment ctx, MemorySegment stream, MemorySegment module, MemorySegment function,
                 KernelModel model) {
            this.name = name;
            this.ctx = ctx;
            this.stream = stream;
            this.module = module;
            this.function = function;
            this.model = model;
        }

        @Override
        public String backend() {
            return "cuda";
        }

        @Override
        public String description() {
            return "CUDA " + name + ": one stream, a %globaltimer spin kernel per request (" + model
                    + "), then a recorded CUevent";
        }

        @Override
        public synchronized SyncPoint submit(Work work) {
            if (closed) {
                throw new SyncCancelledException("the CUDA device is closed");
            }
            long ns = work.duration().map(Duration::toNanos).orElseGet(() -> model.sampleNanos(ThreadLocalRandom.current()));
            try (Arena a = Arena.ofConfined()) {
                check(Cuda.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent");
                try {
                    MemorySegment params = a.allocate(ValueLayout.ADDRESS);
                    params.set(ValueLayout.ADDRESS, 0, a.allocateFrom(ValueLayout.JAVA_LONG, ns));
                    check(Cuda.cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, stream, params, MemorySegment.NULL),
                            "cuLaunchKernel(" + KERNEL + ")");
                } finally {
                    Cuda.cuCtxPopCurrent_v2(a.allocate(ValueLayout.ADDRESS));
                }
            }
            return CudaEvents.record(stream, ctx);
        }

        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            try (Arena a = Arena.ofConfined()) {
                Cuda.cuCtxPushCurrent_v2(ctx);
                Cuda.cuStreamSynchronize(stream);
                Cuda.cuModuleUnload(module);
                Cuda.cuStreamDestroy_v2(stream);
                Cuda.cuCtxPopCurrent_v2(a.allocate(ValueLayout.ADDRESS));
            }
            Cuda.cuDevicePrimaryCtxRelease_v2(0);
        }
    }
}
