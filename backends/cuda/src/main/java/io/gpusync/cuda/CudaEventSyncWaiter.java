package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.CudaEventWaiter;
import io.gpusync.SyncException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import io.gpusync.spi.Timeouts;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Objects;
/**
 * The waiter of a {@link io.gpusync.SyncPoint.CudaEvent}: a {@code CUevent} with its owning {@code CUcontext}.
 *
 * <ul>
 *   <li>{@link #isSignaled()}: one {@code cuEventQuery} (for an event of a stream's order, only when the order
 *       cannot answer: {@link StreamOrder#probe}): {@code CUDA_SUCCESS} → true,
 *       {@code CUDA_ERROR_NOT_READY} → false, a sticky context error → {@link io.gpusync.DeviceLostException}
 *       (never {@code false}), anything else → the exception {@link CudaResults#exception} assigns.</li>
 *   <li>{@link #await}: {@code cuEventSynchronize} can neither time out nor be cancelled (and it spins), so the
 *       wait is {@link SpinThenPark}: query-spin for 50 µs (catches short kernels as soon as the driver's own
 *       spin would), then a stream callback armed behind the event on a private stream unparks the thread (no
 *       CPU burnt), with a probe every 1–64 ms as a second line against sticky errors. Interrupt →
 *       {@link io.gpusync.SyncCancelledException}.</li>
 *   <li>{@link #onSignal}: the engine's no-thread path — a stream callback behind the event on a private
 *       stream; cancel removes its key. On a context with a sticky error the callback runs with the error and
 *       {@link CudaFaultWatch} fails the listener with {@link io.gpusync.DeviceLostException} ({@code FOREVER}
 *       waits included; the watch also queries contexts whose waits have no callback in flight). An event
 *       minted under a {@link CudaPointOwner} fails with
 *       {@link io.gpusync.SyncCancelledException} when the owner closes.</li>
 *   <li>{@link #waitOnForeignStream}: {@code cuStreamWaitEvent(stream, event, 0)}, cross-context.</li>
 * </ul>
 *
 * <p>Not a {@link io.gpusync.spi.BlockingWaiter}: its {@code await} spins first. An engine reaches it through
 * {@link SignalCallbackWaiter} (no thread) or probes it.
 *
 * <p><b>Drop discipline.</b> An owned event is destroyed once this waiter is closed or unreachable and no wait
 * or registration holds it: push the owning context ({@code cuCtxPushCurrent_v2}), {@code cuEventDestroy_v2},
 * pop ({@code cuCtxPopCurrent_v2}) if and only if the push succeeded — the releasing thread's context stack is
 * unchanged. A borrowed event is never destroyed. Thread-safe.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
final class CudaEventSyncWaiter implements CudaEventWaiter, SignalCallbackWaiter, io.gpusync.spi.CheapProbe {
    private final MemorySegment event;
    private final MemorySegment context;
    private final int device;
    private final NativeAnchor.Claim claim;
    private final OwnerLifetime lifetime; // null: no owned producer behind the event
    private final EventWakeup wakeup;        // the event's one outstanding stream callback, shared by every wait
    private final CudaDriverService service;

    CudaEventSyncWaiter(CudaDriverService service, MemorySegment event, MemorySegment context, int device,
                        NativeAnchor anchor) {
        this(service, event, context, device, anchor, null);
    }

    CudaEventSyncWaiter(CudaDriverService service, MemorySegment event, MemorySegment context, int device,
                        NativeAnchor anchor, OwnerLifetime lifetime) {
        this(service, event, context, device, anchor, lifetime, null, 0);
    }

    /**
     * An event recorded by gpusync on a stream it owns, as the {@code seq}-th event of {@code order} (null: an event
     * of its own): its waits are served by the stream's order ({@link StreamOrder}).
     */
    CudaEventSyncWaiter(CudaDriverService service, MemorySegment event, MemorySegment context, int device,
                        NativeAnchor anchor, OwnerLifetime lifetime, StreamOrder order, long seq) {
        this.service = Objects.requireNonNull(service, "service");
        this.event = Objects.requireNonNull(event, "event");
        this.context = Objects.requireNonNull(context, "context");
        this.device = device;
        this.claim = anchor.claim(this);
        this.lifetime = lifetime;
        this.wakeup = new EventWakeup(service, this.event, this.context, lifetime, claim, this::query, order, seq);
    }

    /** The release action of an owned event; captures handles only, never the waiter. */
    static Runnable destroyAction(MemorySegment event, MemorySegment context) {
        long ev = event.address();
        long ctx = context.address();
        return () -> destroyEvent(MemorySegment.ofAddress(ev), MemorySegment.ofAddress(ctx));
    }

    /**
     * Push the owning context, destroy, pop. If the push fails (the context is gone, and with it the event) the
     * event is <em>not</em> destroyed: destroying it in whatever context happens to be current could free another
     * context's object. Never throws; never synchronizes with the device ({@code cuEventDestroy} of an event still
     * recorded returns at once, the driver frees it when the work completes).
     */
    static void destroyEvent(MemorySegment event, MemorySegment context) {
        int pushed = Cuda.cuCtxPushCurrent_v2(context);
        if (pushed != CudaResults.SUCCESS) {
            CudaDriver.logRelease(pushed, "cuCtxPushCurrent_v2(" + CudaDriver.hex(context)
                    + ") before destroying event " + CudaDriver.hex(event) + " (event left to its context)");
            return;
        }
        try {
            CudaDriver.logRelease(Cuda.cuEventDestroy_v2(event), "cuEventDestroy_v2(" + CudaDriver.hex(event) + ")");
        } finally {
            CudaDriver.popQuietly(context);
        }
    }

    @Override
    public BackendKind backend() {
        return BackendKind.CUDA;
    }

    @Override
    public boolean isSignaled() {
        return claim.call(wakeup::probeThroughOrder);
    }

    /** One {@code cuEventQuery}; retried with the owning context pushed if the driver wants a current one. */
    private boolean query() {
        if (lifetime != null) {
            lifetime.check();
        }
        service.ensureDriver();
        int r = Cuda.cuEventQuery(event);
        if (r == CudaResults.INVALID_CONTEXT) {
            try (CudaDriver.Pushed ignored = CudaDriver.Pushed.pushHeld(context, "cuEventQuery")) {
                r = Cuda.cuEventQuery(event);
            }
            if (r == CudaResults.INVALID_CONTEXT) {
                throw CudaResults.contextGone(r, "cuEventQuery(" + this + ")");
            }
        }
        if (r == CudaResults.SUCCESS) {
            return true;
        }
        if (r == CudaResults.NOT_READY) {
            return false;
        }
        throw CudaResults.exception(r, "cuEventQuery(" + this + ")");
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        claim.run(() -> SpinThenPark.await(new SpinThenPark.Target() {
                    @Override
                    public boolean probe() {
                        return query();
                    }

                    @Override
                    public SpinThenPark.Armed arm(Thread thread) {
                        SpinThenPark.ParkingSlot slot = new SpinThenPark.ParkingSlot(thread);
                        try {
                            EventWakeup.Withdrawal w = wakeup.add(slot);
                            slot.withdrawal(w::withdraw);
                            return slot;
                        } catch (SyncException e) {
                            if (e.kind() == io.gpusync.ErrorKind.FATAL) {
                                throw e;
                            }
                            return null; // back off instead
                        }
                    }
                }, timeout, BackendKind.CUDA, this::toString));
    }

    @Override
    public CallbackRegistration onSignal(SignalListener listener) {
        Objects.requireNonNull(listener, "listener");
        claim.enter(); // held until the stream callback fires or the registration is cancelled
        boolean handedOver = false;
        try {
            if (query()) {
                listener.signalled();
                return CallbackRegistration.DONE;
            }
            ListenerSlot slot = new ListenerSlot(listener, claim);
            EventWakeup.Withdrawal withdrawal = wakeup.add(slot);
            handedOver = true; // from here the slot owns the hold: firing, failing or withdrawing it exits
            return () -> {
                if (withdrawal.withdraw()) {
                    claim.exit();
                }
            };
        } finally {
            if (!handedOver) {
                claim.exit();
            }
        }
    }

    @Override
    public void waitOnForeignStream(MemorySegment foreignStream) {
        Objects.requireNonNull(foreignStream, "foreignStream");
        service.ensureDriver(); // SyncNotSupportedException without a driver
        claim.run(() -> {
                int r = Cuda.cuStreamWaitEvent(foreignStream, event, 0);
                if (r == CudaResults.INVALID_CONTEXT && !foreignStream.equals(MemorySegment.NULL)) {
                    try (CudaDriver.Pushed ignored = CudaDriver.Pushed.push(context, "cuStreamWaitEvent")) {
                        r = Cuda.cuStreamWaitEvent(foreignStream, event, 0);
                    }
                }
                if (r != CudaResults.SUCCESS) {
                    String what = "cuStreamWaitEvent(stream " + CudaDriver.hex(foreignStream) + ", " + this + ", 0)";
                    throw new SyncNotSupportedException(BackendKind.CUDA, what + " failed: " + CudaResults.name(r)
                            + " (" + r + ")", CudaResults.exception(r, what));
                }
        });
    }

    @Override
    public boolean callsBackOnDriverThread() {
        return true; // stream callbacks run on a CUDA driver thread
    }

    /** The event handle. */
    MemorySegment event() {
        return event;
    }

    /** The owning context. */
    MemorySegment context() {
        return context;
    }

    /** Whether the native object behind this waiter has been released (tests). */
    boolean released() {
        return claim.anchor().isReleased();
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> whenReleased() {
        return claim.anchor().whenReleased();
    }

    @Override
    public void close() {
        claim.close();
    }

    @Override
    public String toString() {
        return "CudaEventSyncWaiter[event " + CudaDriver.hex(event) + ", context " + CudaDriver.hex(context)
                + ", device " + device + (claim.anchor().isAdopted() ? ", adopted" : ", borrowed") + "]";
    }

    /** A listener registration: the stream callback hands the completion to the listener and drops the hold. */
    private static final class ListenerSlot implements EventWakeup.Waker {
        private final SignalListener listener;
        private final NativeAnchor.Claim claim;

        ListenerSlot(SignalListener listener, NativeAnchor.Claim claim) {
            this.listener = listener;
            this.claim = claim;
        }

        @Override
        public void fire() {
            try {
                listener.signalled();
            } finally {
                claim.exit(); // a release this triggers is moved off the driver thread
            }
        }

        @Override
        public void fail(SyncException error) {
            try {
                listener.failed(error);
            } finally {
                claim.exit();
            }
        }
    }
}
