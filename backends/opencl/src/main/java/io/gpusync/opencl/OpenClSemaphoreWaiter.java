package io.gpusync.opencl;

import io.gpusync.BackendKind;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.CheapProbe;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * The waiter of an OpenCL binary semaphore ({@code cl_semaphore_khr}, extension {@code cl_khr_semaphore}):
 * a {@link io.gpusync.SyncPoint.OpenCl} whose handle is the semaphore. Made by {@link OpenClSemaphores}.
 *
 * <p><b>How the CPU waits.</b> OpenCL has no host wait on a semaphore, so the factory enqueues
 * {@code clEnqueueWaitSemaphoresKHR} on a command queue and keeps the {@code cl_event} of that command: the
 * point is signalled when that event completes, and every method here is the {@code OpenClEventWaiter}'s on
 * that event (status probe, {@code clSetEventCallback}, parking waits; a negative status is an error, never
 * {@code false}). Waiting on a binary semaphore <em>consumes</em> its signal, as every binary-semaphore
 * wait does: one point per signal. GPU work that should follow the signal waits on {@link #waitEvent()}
 * (or on the same queue, which is ordered after it when in-order).
 *
 * <p><b>No value.</b> Following gpu-handle-types, a {@code cl_semaphore_khr} carries no value:
 * {@link #rebindToValue} is empty and {@code withValue} is refused.
 *
 * <p><b>Threading, blocking, cancellation:</b> those of {@code OpenClEventWaiter}. <b>Lifetime:</b> the waiter
 * holds one reference to the semaphore ({@code clReleaseSemaphoreKHR} once closed and no wait is in progress)
 * and one to the wait event.
 */
final class OpenClSemaphoreWaiter implements SignalCallbackWaiter, CheapProbe {
    private final MemorySegment semaphore;
    private final NativeAnchor.Claim claim;
    private final OpenClEventWaiter waitCommand;

    OpenClSemaphoreWaiter(MemorySegment semaphore, NativeAnchor anchor, OpenClEventWaiter waitCommand) {
        this.semaphore = semaphore;
        this.claim = anchor.claim(this);
        this.waitCommand = waitCommand;
    }

    /** The {@code cl_semaphore_khr}. */
    public MemorySegment semaphore() {
        return semaphore;
    }

    /** The {@code cl_event} of the enqueued {@code clEnqueueWaitSemaphoresKHR} (valid while this waiter is open). */
    public MemorySegment waitEvent() {
        return waitCommand.event();
    }

    /** The waiter of {@link #waitEvent()} (holds the event alive around enqueues that list it). */
    OpenClEventWaiter waitCommand() {
        return waitCommand;
    }

    /** Whether the semaphore reference and the wait event have both been released (tests observe it). */
    boolean released() {
        return claim.anchor().isReleased() && waitCommand.anchor().isReleased();
    }

    @Override
    public BackendKind backend() {
        return BackendKind.OPENCL;
    }

    @Override
    public boolean isSignaled() {
        return claim.call(waitCommand::isSignaled);
    }

    @Override
    public void await(Duration timeout) {
        claim.run(() -> waitCommand.await(timeout));
    }

    @Override
    public CallbackRegistration onSignal(SignalListener listener) {
        return claim.call(() -> waitCommand.onSignal(listener));
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> whenReleased() {
        return claim.anchor().whenReleased();
    }

    @Override
    public void close() {
        claim.close();
        waitCommand.close();
    }

    @Override
    public String toString() {
        return "OpenClSemaphoreWaiter[cl_semaphore_khr " + Cl.hex(semaphore) + " via " + waitCommand + "]";
    }
}
