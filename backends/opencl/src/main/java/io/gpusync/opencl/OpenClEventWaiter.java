package io.gpusync.opencl;

import io.gpusync.BackendKind;
import io.gpusync.SyncException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.kit.ParkingListener;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import io.gpusync.spi.Timeouts;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Objects;

/**
 * The waiter of an OpenCL {@code cl_event} ({@link io.gpusync.SyncPoint.OpenCl} without a value). Made by
 * {@link OpenClEvents}; thread-safe.
 *
 * <ul>
 *   <li>{@link #isSignaled()}: one {@code clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)} —
 *       {@code CL_COMPLETE} → {@code true}, a non-negative state → {@code false}, a negative status → a
 *       {@link SyncException} carrying that code (never {@code false}: a failed command never completes).</li>
 *   <li>{@link #onSignal}: {@code clSetEventCallback(event, CL_COMPLETE, …)} through one process-wide upcall
 *       stub; the engine's no-thread path. Already complete (or failed): the listener runs at once.</li>
 *   <li>{@link #await}: {@link Duration#ZERO} probes; any other timeout ({@link io.gpusync.SyncPoint#FOREVER}
 *       included) registers a callback and parks the thread ({@link ParkingListener}) until it fires or the
 *       deadline passes — a wait that neither spins nor polls, never returning before its timeout. A
 *       timed-out or interrupted wait cancels its registration; an interrupt ends it at once with
 *       {@link io.gpusync.SyncCancelledException} and the interrupt flag set. ({@code clWaitForEvents}, the
 *       driver's own wait, is not used: it has no timeout and cannot be interrupted.)</li>
 * </ul>
 *
 * <p><b>Why not {@link io.gpusync.spi.BlockingWaiter}.</b> Every finite {@code await} parks, but it does
 * so by registering a callback, and OpenCL cannot unregister one: a timed-out wait leaves a dead entry in
 * the driver's callback list until the event is released. An engine that waits in short slices would pile
 * those up, one per slice. The honest advertisement is therefore {@link SignalCallbackWaiter}, which the
 * engine prefers anyway (one registration per wait, no thread), plus {@link io.gpusync.spi.CheapProbe}: a
 * status query is a {@code clGetEventInfo} with no system call (tens of nanoseconds on PoCL), so the engine spins
 * on it for its spin budget first: a driver may deliver callbacks well after a status probe sees the completion
 * (NVIDIA's does, by about a hundred microseconds; see {@code benchmarks/RESULTS.md}).
 *
 * <p><b>Lifetime.</b> The waiter holds one OpenCL reference to the event through a {@link NativeAnchor}
 * (see {@link OpenClEvents} for owned versus borrowed handles); {@link #close()} drops this waiter's claim.
 * The reference is released ({@code clReleaseEvent}) exactly once, after the last claim is closed (or
 * collected), no wait or probe is in progress and no callback registration is pending — and, for a command, once the
 * driver can no longer touch it ({@code ClEventRelease}).
 */
final class OpenClEventWaiter implements SignalCallbackWaiter, io.gpusync.spi.CheapProbe {
    private static final int CL_COMPLETE = OpenCl.CL_COMPLETE();

    private final MemorySegment event;
    private final NativeAnchor.Claim claim;
    private final String what;

    OpenClEventWaiter(MemorySegment event, NativeAnchor anchor, String what) {
        this.event = event;
        this.what = what;
        this.claim = anchor.claim(this);
    }

    /** The {@code cl_event} (valid while this waiter is open). */
    public MemorySegment event() {
        return event;
    }

    @Override
    public BackendKind backend() {
        return BackendKind.OPENCL;
    }

    @Override
    public boolean isSignaled() {
        return claim.call(() -> settled(Cl.status(event, what)));
    }

    /** {@code true} when complete, {@code false} while in progress; throws the failure of a negative status. */
    private boolean settled(int status) {
        if (status == CL_COMPLETE) {
            return true;
        }
        if (status < 0) {
            throw ClErrors.eventFailed(status, what);
        }
        return false;
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        claim.run(() -> {
            if (settled(Cl.status(event, what))) {
                return;
            }
            if (timeout.isZero()) {
                throw timedOut(timeout);
            }
            ParkingListener parked = new ParkingListener();
            ClCallbacks.Registration registration = ClCallbacks.register(event, claim.anchor(), parked, what);
            parked.await(timeout, registration::tryCancel, what, () -> timedOut(timeout));
        });
    }

    @Override
    public CallbackRegistration onSignal(SignalListener listener) {
        Objects.requireNonNull(listener, "listener");
        return claim.call(() -> {
            int status = Cl.status(event, what);
            if (status == CL_COMPLETE) {
                listener.signalled();
                return CallbackRegistration.DONE;
            }
            if (status < 0) {
                listener.failed(ClErrors.eventFailed(status, what));
                return CallbackRegistration.DONE;
            }
            return ClCallbacks.register(event, claim.anchor(), listener, what);
        });
    }

    /** The anchor of the event reference (tests observe it). */
    NativeAnchor anchor() {
        return claim.anchor();
    }

    /** Holds the event alive around a call that uses it (an enqueue with this event in its wait list). */
    void enter() {
        claim.enter();
    }

    void exit() {
        claim.exit();
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> whenReleased() {
        return claim.anchor().whenReleased();
    }

    @Override
    public void close() {
        claim.close();
    }

    private SyncTimeoutException timedOut(Duration timeout) {
        return new SyncTimeoutException(BackendKind.OPENCL,
                what + " not complete within " + Timeouts.describe(timeout));
    }

    @Override
    public String toString() {
        return "OpenClEventWaiter[" + what + (claim.isClosed() ? ", closed" : "") + "]";
    }
}
