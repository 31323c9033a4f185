package io.gpusync.cuda;

import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.time.Duration;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static io.gpusync.cuda.CudaTestSupport.assumeCuda;
import static io.gpusync.cuda.CudaTestSupport.check;
import static io.gpusync.cuda.CudaTestSupport.launch;
import static io.gpusync.cuda.CudaTestSupport.mappedWord;
import static io.gpusync.cuda.CudaTestSupport.pop;
import static io.gpusync.cuda.CudaTestSupport.push;
import static io.gpusync.cuda.CudaTestSupport.stream;
import static io.gpusync.cuda.CudaTestSupport.sync;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Several GPUs of one host: an event of device 0 gates a stream of device 1 ({@code waitOnForeignStream} across
 * devices), proven by the data the second device's kernel reads, with and without peer access; host-timeline words
 * come from one pool per device. Needs two CUDA devices (the {@code nvidia-h200-x2} machine); on one GPU every test
 * is skipped, saying so.
 */
@Tag("gpu")
@Tag("multi-gpu")
class CudaMultiDeviceGpuTest {
    private static final long MS = 1_000_000L;
    private static MemorySegment ctx0;
    private static MemorySegment ctx1;

    @BeforeAll
    static void twoDevices() {
        assumeCuda();
        int count = deviceCount();
        assumeTrue(count >= 2, "needs two CUDA devices; this machine has " + count
                + " (the multi-GPU tests run on nvidia-h200-x2)");
        ctx0 = primaryContext(0);
        ctx1 = primaryContext(1);
    }

    @Test
    void anEventOfDeviceZeroGatesAStreamOfDeviceOneThroughHostMemoryWithoutPeerAccess() {
        push(ctx0);
        MemorySegment x = mappedWord(); // portable, mapped: both devices reach it without peer access
        MemorySegment y = mappedWord();
        MemorySegment s0 = stream();
        SyncPoint.CudaEvent written;
        try {
            launch("spin_then_write", s0, 100 * MS, x.address(), 42L);
            written = CudaEvents.record(s0, ctx0);
        } finally {
            pop();
        }
        assertThat(written.isSignaled()).as("kernel A still spinning").isFalse();
        push(ctx1);
        try {
            MemorySegment s1 = stream();
            written.waiter().asCudaEventWaiter().orElseThrow().waitOnForeignStream(s1);
            launch("copy_u64", s1, x.address(), y.address());
            sync(s1);
            assertThat(y.get(ValueLayout.JAVA_LONG, 0)).as("device 1's kernel ran after device 0's write").isEqualTo(42L);
            check(Cuda.cuStreamDestroy_v2(s1), "cuStreamDestroy(s1)");
        } finally {
            pop();
        }
        written.await(Duration.ofSeconds(10));
        written.waiter().close();
    }

    @Test
    void anEventOfDeviceZeroGatesAPeerReadOfItsOwnMemoryByDeviceOne() {
        assumeTrue(canAccessPeer(1, 0), "device 1 cannot access device 0's memory (no peer access between them)");
        enablePeerAccess(ctx1, ctx0);
        push(ctx0);
        MemorySegment y = mappedWord();
        long x;
        MemorySegment s0 = stream();
        SyncPoint.CudaEvent written;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.JAVA_LONG);
            check(Cuda.cuMemAlloc_v2(p, 8), "cuMemAlloc(device 0)");
            x = p.get(ValueLayout.JAVA_LONG, 0);
            check(Cuda.cuMemsetD32_v2(x, 0, 2), "cuMemsetD32");
            launch("spin_then_write", s0, 100 * MS, x, 7L);
            written = CudaEvents.record(s0, ctx0);
        } finally {
            pop();
        }
        push(ctx1);
        try {
            MemorySegment s1 = stream();
            written.waiter().asCudaEventWaiter().orElseThrow().waitOnForeignStream(s1);
            launch("copy_u64", s1, x, y.address()); // a peer read of device 0's memory
            sync(s1);
            assertThat(y.get(ValueLayout.JAVA_LONG, 0)).as("device 1 read device 0's value after its write").isEqualTo(7L);
            check(Cuda.cuStreamDestroy_v2(s1), "cuStreamDestroy(s1)");
        } finally {
            pop();
        }
        written.await(Duration.ofSeconds(10));
        written.waiter().close();
        push(ctx0);
        try {
            check(Cuda.cuMemFree_v2(x), "cuMemFree");
        } finally {
            pop();
        }
    }

    @Test
    void hostTimelineWordsComeFromOnePoolPerDevice() {
        try (CudaHostTimeline t0 = CudaHostTimeline.create(ctx0); CudaHostTimeline t1 = CudaHostTimeline.create(ctx1)) {
            assertThat(t0.device()).isZero();
            assertThat(t1.device()).isEqualTo(1);
            assertThat(CudaDriverService.get().pinnedPool(0)).isNotSameAs(CudaDriverService.get().pinnedPool(1));
            push(ctx1);
            try {
                MemorySegment s1 = stream();
                SyncPoint.Cuda value = t1.advance(s1);
                value.await(Duration.ofSeconds(10));
                assertThat(value.isSignaled()).isTrue();
                check(Cuda.cuStreamDestroy_v2(s1), "cuStreamDestroy(s1)");
            } finally {
                pop();
            }
        }
    }

    static int deviceCount() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            check(Cuda.cuDeviceGetCount(count), "cuDeviceGetCount");
            return count.get(ValueLayout.JAVA_INT, 0);
        }
    }

    private static MemorySegment primaryContext(int device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuDevicePrimaryCtxRetain(p, device), "cuDevicePrimaryCtxRetain(" + device + ")");
            return MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
        }
    }

    // the peer-access entry points are not among the generated bindings: declared here, for this test only
    private static MethodHandle driverFunction(String name, FunctionDescriptor descriptor) {
        SymbolLookup lib = SymbolLookup.libraryLookup("libcuda.so.1", Arena.global());
        return Linker.nativeLinker().downcallHandle(lib.find(name).orElseThrow(), descriptor);
    }

    private static boolean canAccessPeer(int device, int peer) {
        MethodHandle f = driverFunction("cuDeviceCanAccessPeer", FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment can = arena.allocate(ValueLayout.JAVA_INT);
            check((int) f.invokeExact(can, device, peer), "cuDeviceCanAccessPeer");
            return can.get(ValueLayout.JAVA_INT, 0) != 0;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Lets {@code current}'s kernels access {@code peer}'s memory (idempotent). */
    private static void enablePeerAccess(MemorySegment current, MemorySegment peer) {
        MethodHandle f = driverFunction("cuCtxEnablePeerAccess",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        push(current);
        try {
            int r = (int) f.invokeExact(peer, 0);
            if (r != 704) { // CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
                check(r, "cuCtxEnablePeerAccess");
            }
        } catch (Throwable t) {
            throw new AssertionError(t);
        } finally {
            pop();
        }
    }
}
