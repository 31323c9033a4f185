package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * A small owned CUDA producer for demos, benchmarks and tests: device {@code n}'s primary context, one
 * non-blocking stream, a module with a one-thread "spin for N ns" kernel, and a {@link CudaHostTimeline} on
 * that stream. Submit work with {@link #launchSpin}, then mint the point to await with {@link #recordEvent}
 * (a {@code CUevent}) or {@link #advanceTimeline} (a host-memory timeline value).
 *
 * <p><b>Threading.</b> Submissions are serialised (one stream) and may come from any thread; the context is
 * pushed and popped around each driver call, so the caller's context stack is left as it was. Nothing here
 * blocks except {@link #synchronize()} and {@link #close()}, which wait for the stream to drain.
 */
public final class CudaWorkQueue implements AutoCloseable {
    private final int device;
    private final MemorySegment context;
    private final MemorySegment stream;
    private final MemorySegment module;
    private final MemorySegment spinKernel;
    private final CudaHostTimeline timeline;
    private final String deviceName;
    private boolean closed;

    private CudaWorkQueue(int device) {
        CudaDriver.ensure();
        this.device = device;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuDevicePrimaryCtxRetain(p, device), "cuDevicePrimaryCtxRetain(" + device + ")");
            this.context = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
            MemorySegment name = arena.allocate(256);
            check(Cuda.cuDeviceGetName(name, 256, device), "cuDeviceGetName");
            this.deviceName = name.getString(0);
            try (CudaDriver.Pushed pushed = CudaDriver.Pushed.push(context, "CudaWorkQueue")) {
                check(Cuda.cuStreamCreate(p, Cuda.CU_STREAM_NON_BLOCKING()), "cuStreamCreate");
                this.stream = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                check(Cuda.cuModuleLoadData(p, arena.allocateFrom(ptx())), "cuModuleLoadData(kernels.ptx)");
                this.module = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                check(Cuda.cuModuleGetFunction(p, module, arena.allocateFrom("spin_ns")), "cuModuleGetFunction(spin_ns)");
                this.spinKernel = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
            }
        }
        this.timeline = CudaHostTimeline.create(context);
    }

    /**
     * Opens device {@code device}.
     *
     * @throws SyncNotSupportedException if there is no CUDA driver or no such device
     */
    public static CudaWorkQueue open(int device) {
        return new CudaWorkQueue(device);
    }

    /** The device's name, e.g. "NVIDIA H200". */
    public String deviceName() {
        return deviceName;
    }

    /** The device ordinal. */
    public int device() {
        return device;
    }

    /** The primary context (retained by this queue until {@link #close()}). */
    public MemorySegment context() {
        return context;
    }

    /** The queue's stream. */
    public MemorySegment stream() {
        return stream;
    }

    /** The host-memory timeline advanced by {@link #advanceTimeline()}. */
    public CudaHostTimeline timeline() {
        return timeline;
    }

    /** Enqueues a one-thread kernel that spins for {@code nanos} ns of GPU time ({@code %globaltimer}). */
    public synchronized void launchSpin(long nanos) {
        requireOpen();
        try (Arena arena = Arena.ofConfined();
             CudaDriver.Pushed pushed = CudaDriver.Pushed.push(context, "launchSpin")) {
            MemorySegment params = arena.allocate(ValueLayout.ADDRESS, 1);
            params.setAtIndex(ValueLayout.ADDRESS, 0, arena.allocateFrom(ValueLayout.JAVA_LONG, nanos));
            check(Cuda.cuLaunchKernel(spinKernel, 1, 1, 1, 1, 1, 1, 0, stream, params, MemorySegment.NULL),
                    "cuLaunchKernel(spin_ns)");
        }
    }

    /** An owned event recorded on the stream now: signalled when everything submitted so far is done. */
    public synchronized SyncPoint.CudaEvent recordEvent() {
        requireOpen();
        return CudaEvents.record(stream, context);
    }

    /** The next value of the host-memory timeline, written by the stream after everything submitted so far. */
    public synchronized SyncPoint.Cuda advanceTimeline() {
        requireOpen();
        return timeline.advance(stream);
    }

    /** Blocks until the stream has drained. */
    public void synchronize() {
        try (CudaDriver.Pushed pushed = CudaDriver.Pushed.push(context, "synchronize")) {
            check(Cuda.cuStreamSynchronize(stream), "cuStreamSynchronize");
        }
    }

    /** Drains the stream, then releases the stream, module, timeline and the primary-context retain. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        synchronize();
        timeline.close();
        try (CudaDriver.Pushed pushed = CudaDriver.Pushed.push(context, "close")) {
            CudaDriver.logRelease(Cuda.cuModuleUnload(module), "cuModuleUnload");
            CudaDriver.logRelease(Cuda.cuStreamDestroy_v2(stream), "cuStreamDestroy_v2");
        }
        CudaDriver.logRelease(Cuda.cuDevicePrimaryCtxRelease_v2(device), "cuDevicePrimaryCtxRelease_v2");
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("CudaWorkQueue on " + deviceName + " is closed");
        }
    }

    private static void check(int r, String what) {
        if (r != CudaResults.SUCCESS) {
            throw CudaResults.exception(r, what);
        }
    }

    private static String ptx() {
        try (InputStream in = CudaWorkQueue.class.getResourceAsStream("kernels.ptx")) {
            if (in == null) {
                throw new SyncNotSupportedException(BackendKind.CUDA, "kernels.ptx missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new SyncNotSupportedException(BackendKind.CUDA, "cannot read kernels.ptx", e);
        }
    }

    @Override
    public String toString() {
        return "CudaWorkQueue[" + deviceName + ", device " + device + "]";
    }
}
