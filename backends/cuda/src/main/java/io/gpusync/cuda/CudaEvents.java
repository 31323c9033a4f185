package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Factories of {@link SyncPoint.CudaEvent} points over the CUDA driver API. Every point's waiter is a
 * {@link io.gpusync.CudaEventWaiter} (and a {@link io.gpusync.spi.SignalCallbackWaiter}, not a
 * {@link io.gpusync.spi.BlockingWaiter}): {@code isSignaled} is one {@code cuEventQuery}, {@code await} spins 50 µs then parks behind a stream callback,
 * {@code onSignal} needs no thread.
 *
 * <p><b>Raw handles.</b> JCuda and JavaCPP users hold {@code CUevent}/{@code CUcontext}/{@code CUstream} as
 * native addresses ({@code long}); every factory has a {@code long} overload that wraps them with
 * {@link MemorySegment#ofAddress}. A NULL {@code context} means the calling thread's current context (it is an
 * error if there is none); a NULL {@code stream} means that context's legacy default stream.
 *
 * <p><b>Ownership.</b> {@code borrow*} points never destroy the event (the caller does, after the point and its
 * waiter are no longer used). {@link #record} and {@link #adopt} points own it: it is destroyed once every waiter
 * of it is closed or unreachable and no wait is in progress, with the owning context pushed around
 * {@code cuEventDestroy_v2} and popped iff the push succeeded.
 *
 * <p>The device ordinal is the context's {@code CUdevice} ({@code cuCtxGetDevice}), which the driver API numbers
 * like ordinals.
 *
 * <p>Every factory throws {@link io.gpusync.SyncNotSupportedException} when {@code libcuda.so.1} is absent or
 * {@code cuInit} fails — checked before the generated bindings are touched, so never
 * {@link ExceptionInInitializerError}.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
public final class CudaEvents {
    private CudaEvents() {
    }

    /** A point over a borrowed event of {@code context} on {@code device}; no driver call is made but the load. */
    public static SyncPoint.CudaEvent borrow(MemorySegment event, MemorySegment context, int device) {
        requireHandle(event, "event");
        CudaDriver.ensure();
        MemorySegment ctx = CudaDriver.contextOrCurrent(context, "CudaEvents.borrow");
        return point(event, ctx, device,
                NativeAnchor.borrow(CudaEvents.class, "borrowed CUevent " + CudaDriver.hex(event)));
    }

    /** A point over a borrowed event of {@code context} (NULL: current); the device is asked of the context. */
    public static SyncPoint.CudaEvent borrow(MemorySegment event, MemorySegment context) {
        requireHandle(event, "event");
        CudaDriver.ensure();
        MemorySegment ctx = CudaDriver.contextOrCurrent(context, "CudaEvents.borrow");
        return point(event, ctx, CudaDriver.deviceOf(ctx),
                NativeAnchor.borrow(CudaEvents.class, "borrowed CUevent " + CudaDriver.hex(event)));
    }

    /** {@link #borrow(MemorySegment, MemorySegment)} for raw addresses (JCuda, JavaCPP); {@code context} 0 = current. */
    public static SyncPoint.CudaEvent borrow(long event, long context) {
        return borrow(MemorySegment.ofAddress(event), MemorySegment.ofAddress(context));
    }

    /** {@link #borrow(MemorySegment, MemorySegment, int)} for raw addresses. */
    public static SyncPoint.CudaEvent borrow(long event, long context, int device) {
        return borrow(MemorySegment.ofAddress(event), MemorySegment.ofAddress(context), device);
    }

    /**
     * A point that takes ownership of {@code event} (created by the caller in {@code context}, NULL: current):
     * gpusync destroys it when its waiters are done. The caller must not destroy it.
     */
    public static SyncPoint.CudaEvent adopt(MemorySegment event, MemorySegment context) {
        requireHandle(event, "event");
        CudaDriver.ensure();
        MemorySegment ctx = CudaDriver.contextOrCurrent(context, "CudaEvents.adopt");
        int device = CudaDriver.deviceOf(ctx);
        MemorySegment ev = MemorySegment.ofAddress(event.address());
        return point(ev, ctx, device, NativeAnchor.adopt("CUevent " + CudaDriver.hex(ev),
                CudaEventSyncWaiter.destroyAction(ev, ctx)));
    }

    /** {@link #adopt(MemorySegment, MemorySegment)} for raw addresses. */
    public static SyncPoint.CudaEvent adopt(long event, long context) {
        return adopt(MemorySegment.ofAddress(event), MemorySegment.ofAddress(context));
    }

    /**
     * Records a new owned event on {@code stream} of {@code context}: with the context pushed,
     * {@code cuEventCreate(CU_EVENT_DISABLE_TIMING)} + {@code cuEventRecord(event, stream)}; the context is
     * popped again, so the calling thread's context stack is unchanged. The point is signalled when all work
     * enqueued on {@code stream} before this call has completed.
     *
     * @param stream  a stream of {@code context}; NULL: the context's legacy default stream
     * @param context the stream's context; NULL: the calling thread's current context
     */
    public static SyncPoint.CudaEvent record(MemorySegment stream, MemorySegment context) {
        return record(stream, context, null, null);
    }

    /**
     * {@link #record(MemorySegment, MemorySegment)} under a {@link CudaPointOwner}: waits fail with
     * {@link io.gpusync.SyncCancelledException} once {@code lifetime} ends, and {@code afterRelease} runs after the
     * event is destroyed (the producer's hold on the context is dropped there).
     */
    static SyncPoint.CudaEvent record(MemorySegment stream, MemorySegment context, OwnerLifetime lifetime,
                                      Runnable afterRelease) {
        return record(stream, context, lifetime, afterRelease, null);
    }

    /**
     * {@link #record(MemorySegment, MemorySegment, OwnerLifetime, Runnable)} on a stream recorded in order: the event
     * joins {@code order} (null: none) as its next member, numbered here, so call it under the producer's lock.
     */
    static SyncPoint.CudaEvent record(MemorySegment stream, MemorySegment context, OwnerLifetime lifetime,
                                      Runnable afterRelease, StreamOrder order) {
        java.util.Objects.requireNonNull(stream, "stream");
        CudaDriver.ensure();
        MemorySegment ctx = CudaDriver.contextOrCurrent(context, "CudaEvents.record");
        try (CudaDriver.Pushed ignored = CudaDriver.Pushed.push(ctx, "CudaEvents.record");
             Arena arena = Arena.ofConfined()) {
            MemorySegment dev = arena.allocate(ValueLayout.JAVA_INT);
            CudaResults.check(Cuda.cuCtxGetDevice(dev), "cuCtxGetDevice(" + CudaDriver.hex(ctx) + ")");
            MemorySegment pEvent = arena.allocate(ValueLayout.ADDRESS);
            CudaResults.check(Cuda.cuEventCreate(pEvent, Cuda.CU_EVENT_DISABLE_TIMING()),
                    "cuEventCreate(CU_EVENT_DISABLE_TIMING) in context " + CudaDriver.hex(ctx));
            MemorySegment event = MemorySegment.ofAddress(pEvent.get(ValueLayout.ADDRESS, 0).address());
            int r = Cuda.cuEventRecord(event, stream);
            if (r != CudaResults.SUCCESS) {
                CudaDriver.logRelease(Cuda.cuEventDestroy_v2(event), "cuEventDestroy_v2 after a failed record");
                throw CudaResults.exception(r, "cuEventRecord(event, stream " + CudaDriver.hex(stream) + ")");
            }
            Runnable destroy = CudaEventSyncWaiter.destroyAction(event, ctx);
            Runnable release = afterRelease == null ? destroy : () -> {
                try {
                    destroy.run();
                } finally {
                    afterRelease.run();
                }
            };
            NativeAnchor anchor = NativeAnchor.adopt("CUevent " + CudaDriver.hex(event), release);
            MemorySegment ev = MemorySegment.ofAddress(event.address());
            MemorySegment c = MemorySegment.ofAddress(ctx.address());
            int device = dev.get(ValueLayout.JAVA_INT, 0);
            return new SyncPoint.CudaEvent(ev, c, device, new CudaEventSyncWaiter(CudaDriverService.get(), ev, c, device,
                    anchor, lifetime, order, order != null ? order.nextSeq() : 0));
        }
    }

    /** {@link #record(MemorySegment, MemorySegment)} for raw addresses ({@code 0} = NULL). */
    public static SyncPoint.CudaEvent record(long stream, long context) {
        return record(MemorySegment.ofAddress(stream), MemorySegment.ofAddress(context));
    }

    private static SyncPoint.CudaEvent point(MemorySegment event, MemorySegment context, int device,
                                             NativeAnchor anchor) {
        MemorySegment ev = MemorySegment.ofAddress(event.address());
        MemorySegment ctx = MemorySegment.ofAddress(context.address());
        return new SyncPoint.CudaEvent(ev, ctx, device, new CudaEventSyncWaiter(CudaDriverService.get(), ev, ctx, device,
                anchor));
    }

    private static void requireHandle(MemorySegment handle, String name) {
        java.util.Objects.requireNonNull(handle, name);
        if (handle.equals(MemorySegment.NULL)) {
            throw new SyncInvalidArgumentException(BackendKind.CUDA, "a CUDA " + name + " handle must not be NULL");
        }
    }
}
