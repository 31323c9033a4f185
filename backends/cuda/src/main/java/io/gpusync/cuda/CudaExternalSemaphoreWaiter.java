package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.CheapProbe;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Optional;

/**
 * The CPU-side waiter of an imported external semaphore at a value ({@link io.gpusync.SyncPoint.Cuda} whose
 * {@code event} is the {@code CUexternalSemaphore}); made by {@link CudaExternalSemaphore#point}.
 *
 * <p><b>How the CPU waits.</b> CUDA has no host wait on an external semaphore, so minting the point enqueues
 * {@code cuWaitExternalSemaphoresAsync(value)} on a stream followed by a {@code cuEventRecord}: the point is
 * signalled when that event completes, and every method here is the CUDA event waiter's on it — a
 * {@code cuEventQuery} probe ({@link CheapProbe}), stream callbacks ({@link SignalCallbackWaiter}),
 * spin-then-park waits, and {@link CudaFaultWatch} coverage: a sticky error on the context fails pending waits
 * with {@link io.gpusync.DeviceLostException} instead of leaving them parked. Errors are never {@code false}.
 *
 * <p><b>Rebinding.</b> {@link #rebindToValue} enqueues a new wait (and event) at the new value on the same
 * stream: nothing of this waiter's value is carried over. On an in-order stream, later work waits for the
 * semaphore too, so pass a stream of its own (the Vulkan→CUDA bridge uses one per point).
 *
 * <p><b>Threading, blocking, cancellation:</b> those of the CUDA event waiter (thread-safe; {@link #await}
 * parks after a short spin; interrupts end it with {@link io.gpusync.SyncCancelledException}). <b>Lifetime:</b>
 * holds the semaphore (not destroyed while this waiter is open) and owns the recorded event.
 */
final class CudaExternalSemaphoreWaiter implements SignalCallbackWaiter, CheapProbe {
    private final CudaExternalSemaphore semaphore;
    private final MemorySegment stream;
    private final long value;
    private final NativeAnchor.Claim claim;
    private final CudaEventSyncWaiter recorded;

    CudaExternalSemaphoreWaiter(CudaExternalSemaphore semaphore, NativeAnchor anchor, MemorySegment stream,
                                long value, CudaEventSyncWaiter recorded) {
        this.semaphore = semaphore;
        this.stream = stream;
        this.value = value;
        this.claim = anchor.claim(this);
        this.recorded = recorded;
    }

    /** The semaphore waited on. */
    public CudaExternalSemaphore semaphore() {
        return semaphore;
    }

    /** The value waited for (unsigned). */
    public long value() {
        return value;
    }

    @Override
    public BackendKind backend() {
        return BackendKind.CUDA;
    }

    @Override
    public boolean isSignaled() {
        return claim.call(recorded::isSignaled);
    }

    @Override
    public void await(Duration timeout) {
        claim.run(() -> recorded.await(timeout));
    }

    @Override
    public CallbackRegistration onSignal(SignalListener listener) {
        return claim.call(() -> recorded.onSignal(listener));
    }

    @Override
    public boolean callsBackOnDriverThread() {
        return recorded.callsBackOnDriverThread();
    }

    @Override
    public Optional<SyncWaiter> rebindToValue(long newValue) {
        return Optional.of(claim.call(() -> semaphore.point(stream, newValue).waiter()));
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> whenReleased() {
        return claim.anchor().whenReleased();
    }

    @Override
    public void close() {
        recorded.close();
        claim.close();
    }

    @Override
    public String toString() {
        return "CudaExternalSemaphoreWaiter[" + semaphore + " at " + Long.toUnsignedString(value) + " via " + recorded
                + "]";
    }
}
