package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import io.gpusync.spi.Timeouts;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The waiter of a {@link CudaHostTimeline} value (a {@link io.gpusync.SyncPoint.Cuda} with a value).
 *
 * <ul>
 *   <li>{@link #isSignaled()}: one acquire read of the pinned word, compared unsigned (far cheaper than a
 *       {@code cuEventQuery}; skipped for a value at or below one already read); while the value is not reached, at
 *       most once per millisecond per context a health check ({@code cuStreamQuery}) turns a sticky error into
 *       {@link io.gpusync.DeviceLostException} — a poisoned context never writes the word, and {@code false}
 *       forever would make a polling loop spin forever.</li>
 *   <li>{@link #await}: {@link SpinThenPark} — spin on the word for 50 µs (it flips as soon as any probe could
 *       see the work done), then a stream callback unparks the thread
 *       (the one launched after the write by {@link CudaHostTimeline#advanceWithStreamCallback}, or one armed on
 *       demand behind an event on a private stream), with a probe (read + rate-limited health check) every
 *       1–64 ms.</li>
 *   <li>{@link #onSignal}: completion by a stream callback, no thread waiting; cancel drops the registration.</li>
 *   <li>{@link #rebindToValue}: a waiter at another value of the same timeline, sharing its anchor.</li>
 * </ul>
 *
 * <p>Not a {@link io.gpusync.spi.BlockingWaiter} (it spins first). Thread-safe.
 */
final class CudaTimelineWaiter implements SignalCallbackWaiter, io.gpusync.spi.CheapProbe {
    private final TimelineState state;
    private final NativeAnchor anchor;
    private final NativeAnchor.Claim claim;
    private final long target;

    CudaTimelineWaiter(TimelineState state, NativeAnchor anchor, long target) {
        this.state = Objects.requireNonNull(state, "state");
        this.anchor = anchor;
        this.claim = anchor.claim(this);
        this.target = target;
    }

    /** The value this waiter waits for (unsigned). */
    long target() {
        return target;
    }

    @Override
    public BackendKind backend() {
        return BackendKind.CUDA;
    }

    @Override
    public boolean isSignaled() {
        return claim.call(() -> state.reached(target));
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        claim.run(() -> SpinThenPark.await(new SpinThenPark.Target() {
                    @Override
                    public boolean probe() {
                        return state.reached(target);
                    }

                    @Override
                    public SpinThenPark.Armed arm(Thread thread) {
                        SpinThenPark.ParkingSlot unparker = new SpinThenPark.ParkingSlot(thread);
                        TimelineListener node = state.addListener(target, unparker, null);
                        unparker.withdrawal(node::cancel);
                        try {
                            state.ensureCovered(target);
                        } catch (SyncException e) {
                            node.cancel();
                            if (e.kind() == ErrorKind.FATAL) {
                                throw e;
                            }
                            return null; // back off instead
                        }
                        state.recheck(node);
                        return unparker;
                    }
                }, timeout, BackendKind.CUDA, this::toString));
    }

    @Override
    public CallbackRegistration onSignal(SignalListener listener) {
        Objects.requireNonNull(listener, "listener");
        claim.enter(); // held until the listener has run or the registration is cancelled
        boolean handedOver = false;
        try {
            if (state.reached(target)) {
                listener.signalled();
                return CallbackRegistration.DONE;
            }
            TimelineListener node = state.addListener(target, listener, claim);
            handedOver = true; // from here the node owns the hold: completing or cancelling it exits
            try {
                state.ensureCovered(target);
            } catch (RuntimeException e) {
                node.cancel();
                throw e;
            }
            state.recheck(node);
            return node;
        } finally {
            if (!handedOver) {
                claim.exit();
            }
        }
    }

    @Override
    public boolean callsBackOnDriverThread() {
        return true; // stream callbacks run on a CUDA driver thread (or inside onSignal when already reached)
    }

    @Override
    public Optional<SyncWaiter> rebindToValue(long value) {
        return Optional.of(new CudaTimelineWaiter(state, anchor, value));
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
        return "CudaTimelineWaiter[word " + CudaDriver.hex(state.word) + " ≥ " + Long.toUnsignedString(target)
                + ", context " + CudaDriver.hex(state.context) + "]";
    }
}
