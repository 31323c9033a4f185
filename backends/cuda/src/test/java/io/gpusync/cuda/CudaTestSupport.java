package io.gpusync.cuda;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.internal.NativeLibraries;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.HashMap;
import java.util.Map;
import io.gpusync.test.cuda.CudaWorkQueue;

/** Raw CUDA driver helpers for the gpu tests (contexts, streams, mapped memory, the test kernels). */
final class CudaTestSupport {
    private static final Map<Long, MemorySegment> MODULES = new HashMap<>();

    private CudaTestSupport() {
    }

    /**
     * Skips the test where a CUDA driver loads: tests that register made-up contexts must not meet the fault watch,
     * which would push them into the real driver (on the H200 that crashed the JVM inside libcuda).
     */
    static void assumeNoCudaDriver() {
        try {
            CudaDriver.ensure();
        } catch (io.gpusync.SyncNotSupportedException expected) {
            return; // the fault watch finds no driver to query a made-up context with
        }
        assumeTrue(false, "a CUDA driver is here: the fault watch would push the test's made-up context");
    }

    /** Skips the test unless libcuda.so.1 loads, cuInit works and there is a device. */
    static void assumeCuda() {
        assumeTrue(NativeLibraries.isAvailable("libcuda.so.1"), "libcuda.so.1 is not installed: no CUDA driver here");
        assumeTrue(Cuda.cuInit(0) == 0, "cuInit(0) failed");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            assumeTrue(Cuda.cuDeviceGetCount(count) == 0 && count.get(ValueLayout.JAVA_INT, 0) > 0,
                    "no CUDA device");
        }
    }

    static void check(int r, String what) {
        if (r != 0) {
            throw new AssertionError(what + " failed: " + CudaResults.name(r) + " (" + r + ")");
        }
    }

    /** The primary context of device 0 (retained; never released by the tests). */
    static synchronized MemorySegment primaryContext() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuDevicePrimaryCtxRetain(p, 0), "cuDevicePrimaryCtxRetain");
            return MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
        }
    }

    /**
     * A new context on device 0 ({@code cuCtxCreate_v4}, falling back to {@code cuCtxCreate_v2} on drivers
     * older than 12.5), popped again so the calling thread's stack is unchanged.
     */
    static MemorySegment createContext() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            int r;
            SymbolLookup lib = SymbolLookup.libraryLookup("libcuda.so.1", Arena.global());
            if (lib.find("cuCtxCreate_v4").isPresent()) {
                r = Cuda.cuCtxCreate_v4(p, MemorySegment.NULL, 0, 0);
            } else {
                MethodHandle v2 = Linker.nativeLinker().downcallHandle(lib.find("cuCtxCreate_v2").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT,
                                ValueLayout.JAVA_INT));
                try {
                    r = (int) v2.invokeExact(p, 0, 0);
                } catch (Throwable t) {
                    throw new AssertionError(t);
                }
            }
            check(r, "cuCtxCreate");
            MemorySegment ctx = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
            check(Cuda.cuCtxPopCurrent_v2(arena.allocate(ValueLayout.ADDRESS)), "cuCtxPopCurrent after create");
            return ctx;
        }
    }

    static MemorySegment current() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuCtxGetCurrent(p), "cuCtxGetCurrent");
            return MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
        }
    }

    static void push(MemorySegment ctx) {
        check(Cuda.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent_v2");
    }

    static MemorySegment pop() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuCtxPopCurrent_v2(p), "cuCtxPopCurrent_v2");
            return MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
        }
    }

    /** A non-blocking stream of the current context. */
    static MemorySegment stream() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuStreamCreate(p, Cuda.CU_STREAM_NON_BLOCKING()), "cuStreamCreate");
            return MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
        }
    }

    /** 8 zeroed bytes of pinned, mapped, portable host memory (current context); never freed by the tests. */
    static MemorySegment mappedWord() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuMemHostAlloc(p, 8, Cuda.CU_MEMHOSTALLOC_DEVICEMAP() | Cuda.CU_MEMHOSTALLOC_PORTABLE()),
                    "cuMemHostAlloc");
            MemorySegment word = p.get(ValueLayout.ADDRESS, 0).reinterpret(8);
            word.set(ValueLayout.JAVA_LONG, 0, 0L);
            return word;
        }
    }

    /** A kernel of the test module, loaded once per context (the context must be current). */
    static synchronized MemorySegment function(String name) {
        MemorySegment ctx = current();
        MemorySegment module = MODULES.get(ctx.address());
        try (Arena arena = Arena.ofConfined()) {
            if (module == null) {
                MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
                check(Cuda.cuModuleLoadData(p, Arena.global().allocateFrom(ptx())), "cuModuleLoadData(kernels.ptx)");
                module = p.get(ValueLayout.ADDRESS, 0);
                MODULES.put(ctx.address(), module);
            }
            MemorySegment f = arena.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuModuleGetFunction(f, module, arena.allocateFrom(name)), "cuModuleGetFunction(" + name + ")");
            return f.get(ValueLayout.ADDRESS, 0);
        }
    }

    static String ptx() {
        return CudaWorkQueue.kernelsPtx(); // the test kit's kernels (CudaWorkQueue uses spin_ns)
    }

    /** Launches {@code name} with one thread; each argument is a {@code long} (u64 or pointer). */
    static void launch(String name, MemorySegment stream, long... args) {
        MemorySegment f = function(name);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment params = arena.allocate(ValueLayout.ADDRESS, Math.max(1, args.length));
            for (int i = 0; i < args.length; i++) {
                params.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(ValueLayout.JAVA_LONG, args[i]));
            }
            check(Cuda.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, args.length == 0 ? MemorySegment.NULL : params,
                    MemorySegment.NULL), "cuLaunchKernel(" + name + ")");
        }
    }

    static void sync(MemorySegment stream) {
        check(Cuda.cuStreamSynchronize(stream), "cuStreamSynchronize");
    }

    /**
     * A new non-blocking stream of {@code ctx} held back by a host gate: {@code cuStreamWaitValue64(gate ≥ 1)} is
     * its first command, so everything enqueued on it waits until {@link #open()} stores 1 into the gate. The gate
     * word is the caller's (allocate gates before any stream is gated: {@code cuMemHostAlloc} waits for the device).
     */
    static final class GatedStream {
        final MemorySegment ctx;
        final MemorySegment gate;
        final MemorySegment stream;

        GatedStream(MemorySegment ctx, MemorySegment gate) {
            this.ctx = ctx;
            this.gate = gate;
            gate.set(ValueLayout.JAVA_LONG, 0, 0L);
            push(ctx);
            try (Arena arena = Arena.ofConfined()) {
                stream = stream();
                MemorySegment p = arena.allocate(ValueLayout.JAVA_LONG);
                check(Cuda.cuMemHostGetDevicePointer_v2(p, gate, 0), "cuMemHostGetDevicePointer");
                check(Cuda.cuStreamWaitValue64_v2(stream, p.get(ValueLayout.JAVA_LONG, 0), 1,
                        Cuda.CU_STREAM_WAIT_VALUE_GEQ()), "cuStreamWaitValue64_v2(gate)");
            } finally {
                pop();
            }
        }

        /** Opens the gate (a host store): the stream runs on. */
        void open() {
            gate.set(ValueLayout.JAVA_LONG, 0, 1L);
        }

        /** Opens the gate, drains and destroys the stream. */
        void close() {
            open();
            push(ctx);
            try {
                sync(stream);
                check(Cuda.cuStreamDestroy_v2(stream), "cuStreamDestroy");
            } finally {
                pop();
            }
        }
    }
}
