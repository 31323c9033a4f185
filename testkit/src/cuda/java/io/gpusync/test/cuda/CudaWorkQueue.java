package io.gpusync.test.cuda;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.cuda.CudaHostTimeline;
import io.gpusync.cuda.CudaPointOwner;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small owned CUDA producer for demos, benchmarks and tests: device {@code n}'s primary context, one non-blocking
 * stream, a module with a one-thread "spin for N ns" kernel ({@code kernels.ptx}), and a {@link CudaHostTimeline} on
 * that stream. Submit work with {@link #launchSpin}, then mint the point to await with {@link #recordEvent} (a
 * {@code CUevent}) or {@link #advanceTimeline} (a host-memory timeline value). It uses only {@code gpusync-cuda}'s
 * public API (its points are minted under a {@link CudaPointOwner}) and the CUDA bindings.
 *
 * <p><b>Threading.</b> Submissions are serialised (one stream) and may come from any thread; the context is pushed
 * and popped around each driver call, so the caller's context stack is left as it was. <b>Blocking.</b> Nothing here
 * blocks except {@link #synchronize()} and {@link #close()}, which wait for the stream to drain.
 * <b>Cancellation.</b> {@link #close()} fails every wait still pending on the queue's points.
 *
 * <p><b>Lifetime.</b> The queue retains the primary context until it is closed and every point it minted is
 * released (each point's release drops its hold), so no handle is used after it is freed.
 */
public final class CudaWorkQueue implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CudaWorkQueue.class.getName());
    /** Sticky context errors and a context or driver gone: the context cannot be used any more. */
    private static final Set<Integer> CONTEXT_LOST = Set.of(4, 214, 220, 226, 700, 702, 709, 710, 714, 715, 716,
            717, 718, 719, 721, 810, 911, 916, 999);
    /** No device, no such device, a stub library, a driver too old. */
    private static final Set<Integer> NOT_SUPPORTED = Set.of(34, 35, 36, 100, 101, 102);

    private final int device;
    private final MemorySegment context;
    private final MemorySegment stream;
    private final MemorySegment module;
    private final MemorySegment spinKernel;
    private final CudaPointOwner owner;
    private final CudaHostTimeline timeline;
    private final String deviceName;
    /** Holds on the primary context: the queue's own, one per event not yet destroyed, one for the timeline. */
    private final AtomicInteger contextHolds = new AtomicInteger(1);
    private boolean closed;

    private CudaWorkQueue(int device) {
        this.device = device;
        this.owner = CudaPointOwner.open("CudaWorkQueue on device " + device); // loads the driver, or refuses
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuDevicePrimaryCtxRetain(p, device), "cuDevicePrimaryCtxRetain(" + device + ")");
            this.context = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
            MemorySegment name = arena.allocate(256);
            check(Cuda.cuDeviceGetName(name, 256, device), "cuDeviceGetName");
            this.deviceName = name.getString(0);
            push("CudaWorkQueue");
            try {
                check(Cuda.cuStreamCreate(p, Cuda.CU_STREAM_NON_BLOCKING()), "cuStreamCreate");
                this.stream = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                check(Cuda.cuModuleLoadData(p, arena.allocateFrom(kernelsPtx())), "cuModuleLoadData(kernels.ptx)");
                this.module = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                check(Cuda.cuModuleGetFunction(p, module, arena.allocateFrom("spin_ns")), "cuModuleGetFunction(spin_ns)");
                this.spinKernel = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
            } finally {
                pop();
            }
        }
        contextHolds.incrementAndGet(); // the timeline's hold, dropped after its events are destroyed
        try {
            this.timeline = owner.createTimeline(context, this::dropContextHold);
        } catch (RuntimeException e) {
            dropContextHold();
            throw e;
        }
    }

    /**
     * Opens device {@code device}. Open queues before holding any stream of the device's primary context at a host
     * gate ({@code cuStreamWaitValue*} on memory the host writes later): loading the queue's kernels
     * ({@code cuModuleLoadData}) may wait in the driver for that stream, so it would not return until the gate opens.
     *
     * @throws SyncNotSupportedException if there is no CUDA driver or no such device
     */
    public static CudaWorkQueue open(int device) {
        return new CudaWorkQueue(device);
    }

    /** The device's name as the driver reports it ({@code cuDeviceGetName}). */
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
        push("launchSpin");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment params = arena.allocate(ValueLayout.ADDRESS, 1);
            params.setAtIndex(ValueLayout.ADDRESS, 0, arena.allocateFrom(ValueLayout.JAVA_LONG, nanos));
            check(Cuda.cuLaunchKernel(spinKernel, 1, 1, 1, 1, 1, 1, 0, stream, params, MemorySegment.NULL),
                    "cuLaunchKernel(spin_ns)");
        } finally {
            pop();
        }
    }

    /** The owner the queue's points are minted under (closed with the queue). */
    public CudaPointOwner owner() {
        return owner;
    }

    /**
     * An owned event recorded on the stream now: signalled when everything submitted so far is done. The queue's
     * events are recorded in its stream's order ({@link CudaPointOwner#recordOrderedEvent}).
     */
    public synchronized SyncPoint.CudaEvent recordEvent() {
        requireOpen();
        contextHolds.incrementAndGet(); // dropped once the event is destroyed
        try {
            return owner.recordOrderedEvent(stream, context, this::dropContextHold);
        } catch (RuntimeException e) {
            dropContextHold();
            throw e;
        }
    }

    /** The next value of the host-memory timeline, written by the stream after everything submitted so far. */
    public synchronized SyncPoint.Cuda advanceTimeline() {
        // timeline values hold the context through the timeline's own hold (dropped after its last point)
        requireOpen();
        return timeline.advance(stream);
    }

    /** Blocks until the stream has drained. */
    public void synchronize() {
        push("synchronize");
        try {
            check(Cuda.cuStreamSynchronize(stream), "cuStreamSynchronize");
        } finally {
            pop();
        }
    }

    /**
     * Closes the queue: every wait still pending on its events or timeline values fails at once with
     * {@link io.gpusync.SyncCancelledException} (engine and blocking waits alike, {@code FOREVER} included); then the
     * stream is drained ({@code cuStreamSynchronize}: this call blocks until the submitted work is done; a sticky
     * context error is logged, not thrown), the module unloaded, the stream destroyed and the queue's hold on the
     * primary context dropped. Points minted by the queue keep their events valid until they are released themselves
     * — the primary context is released only after the last of them — so no handle is used after it is freed.
     * Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        owner.close();
        try {
            synchronize();
        } catch (SyncException e) {
            LOG.log(System.Logger.Level.WARNING, "closing " + this + ": the stream did not drain cleanly", e);
        }
        timeline.close();
        try {
            push("close");
            try {
                logRelease(Cuda.cuModuleUnload(module), "cuModuleUnload");
                logRelease(Cuda.cuStreamDestroy_v2(stream), "cuStreamDestroy_v2");
            } finally {
                pop();
            }
        } catch (SyncException e) {
            LOG.log(System.Logger.Level.WARNING,
                    "closing " + this + ": cannot push the context to unload the module and destroy the stream", e);
        }
        dropContextHold();
    }

    /** Drops one hold on the primary context; the last one releases it. */
    private void dropContextHold() {
        if (contextHolds.decrementAndGet() == 0) {
            logRelease(Cuda.cuDevicePrimaryCtxRelease_v2(device), "cuDevicePrimaryCtxRelease_v2(" + device + ")");
        }
    }

    private void push(String what) {
        check(Cuda.cuCtxPushCurrent_v2(context), what + ": cuCtxPushCurrent_v2");
    }

    private void pop() {
        try (Arena arena = Arena.ofConfined()) {
            logRelease(Cuda.cuCtxPopCurrent_v2(arena.allocate(ValueLayout.ADDRESS)), "cuCtxPopCurrent_v2");
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("CudaWorkQueue on " + deviceName + " is closed");
        }
    }

    private static void check(int r, String what) {
        if (r == 0) {
            return;
        }
        String name = name(r);
        if (CONTEXT_LOST.contains(r)) {
            throw new DeviceLostException(BackendKind.CUDA, what + ": " + name + " (" + r + ")");
        }
        if (NOT_SUPPORTED.contains(r)) {
            throw new SyncNotSupportedException(BackendKind.CUDA, what + ": " + name + " (" + r + ")");
        }
        throw new SyncBackendException(ErrorKind.FATAL, BackendKind.CUDA, r, name, what);
    }

    private static void logRelease(int r, String what) {
        if (r != 0) {
            LOG.log(System.Logger.Level.WARNING, () -> what + " failed: " + name(r) + " (" + r + ")");
        }
    }

    private static String name(int r) {
        return "CUresult " + r;
    }

    /**
     * The PTX of the queue's kernels ({@code kernels.ptx}, built from {@code kernels.cu} next to it): {@code spin_ns}
     * and the other one-thread test kernels, for tests that load the module into contexts of their own.
     *
     * @throws SyncNotSupportedException if the resource is missing
     */
    public static String kernelsPtx() {
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
