package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC;
import io.gpusync.bindings.cuda.CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_st;
import io.gpusync.bindings.cuda.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS;
import io.gpusync.bindings.cuda.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_st;
import io.gpusync.bindings.cuda.CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS;
import io.gpusync.bindings.cuda.CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_st;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A Vulkan (or other) timeline semaphore imported into CUDA ({@code CUexternalSemaphore}), for GPU-side
 * hand-offs between Vulkan and CUDA with no CPU round trip: {@link #waitAsync} makes a CUDA stream wait until
 * the semaphore reaches a value (signalled by Vulkan), {@link #signalAsync} sets it from a CUDA stream (for
 * Vulkan to wait on).
 *
 * <p>Import: {@link #importTimelineFd} takes the opaque fd that Vulkan exports for a timeline semaphore
 * ({@code vkGetSemaphoreFdKHR} with {@code VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT}, the semaphore
 * created with {@code VkExportSemaphoreCreateInfo} and {@code VkSemaphoreTypeCreateInfo(TIMELINE)}, device
 * extension {@code VK_KHR_external_semaphore_fd}) and imports it as
 * {@code CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD}. The Vulkan device and the CUDA context must
 * be on the same GPU (compare {@code VkPhysicalDeviceIDProperties.deviceUUID} with {@code cuDeviceGetUuid}).
 *
 * <p>Lifetime: {@code cuDestroyExternalSemaphore} (context pushed, popped iff pushed) once {@link #close()}
 * has been called (or this object is unreachable) and no call on it is in progress. Thread-safe.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
public final class CudaExternalSemaphore implements AutoCloseable {
    private final MemorySegment semaphore;
    private final MemorySegment context;
    private final NativeAnchor.Claim claim;
    private final java.util.concurrent.CompletableFuture<Void> destroyed;
    private final GatedWaits gatedWaits;

    private CudaExternalSemaphore(MemorySegment semaphore, MemorySegment context) {
        this.semaphore = semaphore;
        this.context = context;
        long sem = semaphore.address();
        long ctx = context.address();
        java.util.concurrent.CompletableFuture<Void> destroyed = new java.util.concurrent.CompletableFuture<>();
        this.destroyed = destroyed;
        GatedWaits gatedWaits = CudaDriverService.get().gatedWaits();
        this.gatedWaits = gatedWaits;
        // never destroyed while a wait in its context is pending: the destroy would hold the driver until it passes
        this.claim = NativeAnchor.adopt("CUexternalSemaphore " + CudaDriver.hex(semaphore),
                () -> gatedWaits.destroyWhenClear(MemorySegment.ofAddress(sem), MemorySegment.ofAddress(ctx),
                        destroyed))
                .claim(this);
    }

    /**
     * Imports the timeline semaphore behind {@code fd} into {@code context} (NULL: current). On success the fd
     * belongs to the CUDA driver (do not use or close it again); on failure it is still the caller's.
     *
     * @throws SyncNotSupportedException if the driver is absent, the device lacks timeline-semaphore interop,
     *                                   or the import fails
     */
    public static CudaExternalSemaphore importTimelineFd(int fd, MemorySegment context) {
        if (fd < 0) {
            throw new SyncInvalidArgumentException(BackendKind.CUDA, "importTimelineFd needs a valid fd, got " + fd);
        }
        Objects.requireNonNull(context, "context");
        CudaDriver.ensure();
        MemorySegment ctx = CudaDriver.contextOrCurrent(context, "CudaExternalSemaphore.importTimelineFd");
        try (CudaDriver.Pushed ignored = CudaDriver.Pushed.push(ctx, "CudaExternalSemaphore.importTimelineFd");
             Arena arena = Arena.ofConfined()) {
            MemorySegment pDev = arena.allocate(ValueLayout.JAVA_INT);
            CudaResults.check(Cuda.cuCtxGetDevice(pDev), "cuCtxGetDevice(" + CudaDriver.hex(ctx) + ")");
            MemorySegment attr = arena.allocate(ValueLayout.JAVA_INT);
            int r = Cuda.cuDeviceGetAttribute(attr, Cuda.CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED(),
                    pDev.get(ValueLayout.JAVA_INT, 0));
            if (r == CudaResults.SUCCESS && attr.get(ValueLayout.JAVA_INT, 0) == 0) {
                throw new SyncNotSupportedException(BackendKind.CUDA, "device " + pDev.get(ValueLayout.JAVA_INT, 0)
                        + " does not support timeline-semaphore interop (CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED = 0)");
            }
            MemorySegment desc = CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC.allocate(arena); // zeroed: flags 0, reserved 0
            desc.fill((byte) 0);
            CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_st.type(desc, Cuda.CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD());
            CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_st.handle.fd(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC_st.handle(desc), fd);
            MemorySegment pSem = arena.allocate(ValueLayout.ADDRESS);
            r = Cuda.cuImportExternalSemaphore(pSem, desc);
            if (r != CudaResults.SUCCESS) {
                String what = "cuImportExternalSemaphore(TIMELINE_SEMAPHORE_FD, fd " + fd + ")";
                throw new SyncNotSupportedException(BackendKind.CUDA, what + " failed: " + CudaResults.name(r)
                        + " (" + r + ")", CudaResults.exception(r, what));
            }
            return new CudaExternalSemaphore(MemorySegment.ofAddress(pSem.get(ValueLayout.ADDRESS, 0).address()), ctx);
        }
    }

    /**
     * Enqueues on {@code stream} a wait until the semaphore's value is at least {@code value} (unsigned): work
     * enqueued on the stream afterwards runs only then. Never blocks the calling thread.
     *
     * @param stream a stream of this semaphore's context; NULL: that context's legacy default stream
     */
    public void waitAsync(MemorySegment stream, long value) {
        enqueue(stream, value, false);
    }

    /**
     * Enqueues on {@code stream} a signal that sets the semaphore to {@code value} (unsigned) once the work
     * enqueued before it has completed.
     *
     * @param stream a stream of this semaphore's context; NULL: that context's legacy default stream
     */
    public void signalAsync(MemorySegment stream, long value) {
        enqueue(stream, value, true);
    }

    /** {@code cuSignalExternalSemaphoresAsync} or {@code cuWaitExternalSemaphoresAsync} of this semaphore at {@code value}. */
    private void enqueue(MemorySegment stream, long value, boolean signal) {
        Objects.requireNonNull(stream, "stream");
        String what = signal ? "CudaExternalSemaphore.signalAsync" : "CudaExternalSemaphore.waitAsync";
        claim.run(() -> {
            try (CudaDriver.Pushed ignored = CudaDriver.Pushed.push(context, what);
                 Arena arena = Arena.ofConfined()) {
                MemorySegment sems = arena.allocateFrom(ValueLayout.ADDRESS, semaphore);
                int r;
                if (signal) {
                    MemorySegment params = CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS.allocate(arena);
                    params.fill((byte) 0);
                    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_st.params.fence.value(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_st
                            .params.fence(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_st.params(params)), value);
                    r = Cuda.cuSignalExternalSemaphoresAsync(sems, params, 1, stream);
                } else {
                    MemorySegment params = CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS.allocate(arena);
                    params.fill((byte) 0);
                    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_st.params.fence.value(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_st
                            .params.fence(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_st.params(params)), value);
                    r = gatedWaits.enqueue(context, stream, () -> Cuda.cuWaitExternalSemaphoresAsync(sems, params, 1,
                            stream));
                }
                CudaResults.check(r, (signal ? "cuSignalExternalSemaphoresAsync(" : "cuWaitExternalSemaphoresAsync(")
                        + this + ", value " + Long.toUnsignedString(value) + ")");
            }
        });
    }

    /**
     * A point signalled once the semaphore reaches {@code value} (unsigned), awaitable on the CPU like every
     * other point (by {@code GpuSync} too): enqueues {@code cuWaitExternalSemaphoresAsync} on {@code stream} and
     * records an event after it; the waiter is a {@code CudaExternalSemaphoreWaiter}. Work enqueued later on
     * {@code stream} also waits for the semaphore, so give the point a stream of its own. The point holds the
     * semaphore: it is not destroyed before the point's waiter is closed, even if this object is.
     *
     * @param stream a stream of this semaphore's context; NULL: that context's legacy default stream
     * @throws IllegalStateException if this semaphore is closed
     */
    public SyncPoint.Cuda point(MemorySegment stream, long value) {
        Objects.requireNonNull(stream, "stream");
        return claim.call(() -> {
            waitAsync(stream, value);
            SyncPoint.CudaEvent recorded = CudaEvents.record(stream, context);
            CudaExternalSemaphoreWaiter waiter = new CudaExternalSemaphoreWaiter(this, claim.anchor(), stream, value,
                    (CudaEventSyncWaiter) recorded.waiter());
            return new SyncPoint.Cuda(semaphore, OptionalLong.of(value), waiter);
        });
    }

    /**
     * Completes once the semaphore has been destroyed ({@code cuDestroyExternalSemaphore} returned): this object and
     * every point's waiter closed, and no wait gpusync enqueued in its context pending. Only then may the API that
     * exported it destroy its own semaphore. Completes on gpusync's housekeeping thread; put dependants that block
     * on an executor of their own.
     */
    public java.util.concurrent.CompletionStage<Void> whenReleased() {
        return destroyed.minimalCompletionStage();
    }

    /** The {@code CUexternalSemaphore} handle. */
    public MemorySegment handle() {
        return semaphore;
    }

    /** The context it was imported into. */
    public MemorySegment context() {
        return context;
    }

    /**
     * Drops this object's hold (idempotent): the semaphore is destroyed once no point holds it, no call on it is in
     * progress, and no wait gpusync enqueued in its context is pending, off the calling thread.
     */
    @Override
    public void close() {
        claim.close();
    }

    @Override
    public String toString() {
        return "CudaExternalSemaphore[" + CudaDriver.hex(semaphore) + ", context " + CudaDriver.hex(context) + "]";
    }
}
