package io.gpusync.d3d12;

import io.gpusync.BackendKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.linux.EventFd;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.CheapProbe;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.ReadableFdWaiter;
import io.gpusync.spi.Timeouts;
import io.gpusync.kit.WaitLoop;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The waiter of an {@code ID3D12Fence} at a value (unsigned).
 *
 * <p><b>Probe.</b> {@link #isSignaled()} is {@code GetCompletedValue} ≥ value (a memory read on vkd3d: a
 * {@link CheapProbe}); {@code UINT64_MAX}, D3D12's device-removed value, throws
 * {@link io.gpusync.DeviceLostException}, never {@code true}.
 *
 * <p><b>Completion fd.</b> On first need (a blocking wait or an engine's lease) the waiter makes an eventfd and
 * registers it with {@code SetEventOnCompletion(value, event)}, where {@code event} is a shim handle that writes
 * the eventfd when vkd3d signals it: the fd becomes readable once the fence reaches the value and stays readable,
 * so engines watch it with epoll ({@link ReadableFdWaiter}) and no thread waits. Readability says the value was
 * reached <em>or the device was removed</em> (removal sets every fence to {@code UINT64_MAX}); a wait therefore
 * re-probes the fence after the fd turns readable, which turns a removal into {@link io.gpusync.DeviceLostException}.
 * A value that was reached and later lowered by a {@code Signal} of a smaller value still counts as signalled (the
 * event fired, as in D3D12). The registration and its fd live until this waiter is closed and no wait or lease is
 * in progress; a registration the fence never reaches stays inside vkd3d until the fence is released, harmlessly
 * (the shim forgets the handle, so a late signal writes nothing).
 *
 * <p><b>Blocking.</b> {@link #await} polls the eventfd ({@code poll(2)}, 50 ms slices, millisecond granularity
 * rounded up; an interrupt ends it with {@link io.gpusync.SyncCancelledException} within a slice, keeping the
 * flag), so it parks in the OS ({@link BlockingWaiter}).
 *
 * <p>Thread-safe. Closing releases the fence (when adopted) once every waiter on it is closed or unreachable and
 * no wait is in progress.
 */
final class D3D12FenceWaiter implements CheapProbe, ReadableFdWaiter, BlockingWaiter {
    private final Fence fence;
    private final long value;
    private final NativeAnchor.Claim fenceClaim;
    /** Guarded by {@code this}. */
    private Completion completion;
    /** Guarded by {@code this}. */
    private boolean closed;

    D3D12FenceWaiter(Fence fence, long value) {
        if (value == Fence.DEVICE_REMOVED_VALUE) {
            throw new SyncInvalidArgumentException(BackendKind.D3D12, "UINT64_MAX is D3D12's device-removed value: "
                    + "a fence reaches it only when its device is removed, so " + fence + " cannot be awaited at it");
        }
        this.fence = fence;
        this.value = value;
        this.fenceClaim = fence.anchor.claim(this);
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        fenceClaim.run(() -> {
            if (probe()) {
                return;
            }
            if (timeout.isZero()) {
                throw timedOut(timeout);
            }
            Completion c = completion();
            c.claim.run(() -> {
                try {
                    c.fdWaiter.await(timeout);
                } catch (SyncCancelledException interrupted) { // say what was waited on (the flag stays set)
                    throw WaitLoop.cancelled(this);
                } catch (SyncTimeoutException e) {
                    if (!probe()) { // the fd is the only truth for a wait; a probe costs nothing
                        throw timedOut(timeout);
                    }
                    return;
                }
                probe(); // readable: reached, or removed (throws DeviceLostException)
            });
        });
    }

    @Override
    public boolean isSignaled() {
        return fenceClaim.call(this::probe);
    }

    private boolean probe() {
        return Long.compareUnsigned(fence.completedValue(describe()), value) >= 0;
    }

    @Override
    public BackendKind backend() {
        return BackendKind.D3D12;
    }

    @Override
    public FdLease leaseReadableFd() {
        fenceClaim.enter();
        Completion c;
        try {
            c = completion();
            c.claim.enter();
        } catch (RuntimeException | Error e) {
            fenceClaim.exit();
            throw e;
        }
        return new FdLease() {
            private final AtomicBoolean released = new AtomicBoolean();

            @Override
            public int fd() {
                return c.eventFd.fd();
            }

            @Override
            public void close() {
                if (released.compareAndSet(false, true)) {
                    c.claim.exit();
                    fenceClaim.exit();
                }
            }
        };
    }

    @Override
    public Optional<SyncWaiter> rebindToValue(long newValue) {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException(this + " is closed");
            }
        }
        return Optional.of(new D3D12FenceWaiter(fence, newValue));
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> whenReleased() {
        return fenceClaim.anchor().whenReleased();
    }

    @Override
    public void close() {
        Completion c;
        synchronized (this) {
            closed = true;
            c = completion;
        }
        if (c != null) {
            c.claim.close();
        }
        fenceClaim.close();
    }

    /** The value this waiter waits for. */
    long value() {
        return value;
    }

    /** The fence's anchor (tests observe its release). */
    NativeAnchor anchor() {
        return fence.anchor;
    }

    private synchronized Completion completion() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
        if (completion == null) {
            completion = Completion.register(this, fence, value);
        }
        return completion;
    }

    private SyncTimeoutException timedOut(Duration timeout) {
        return new SyncTimeoutException(BackendKind.D3D12, describe() + " not reached within "
                + Timeouts.describe(timeout));
    }

    private String describe() {
        return "ID3D12Fence " + Fence.hex(fence.fence.address()) + " ≥ " + Long.toUnsignedString(value);
    }

    @Override
    public String toString() {
        return "D3D12FenceWaiter[" + describe() + (fence.anchor.isAdopted() ? ", released by gpusync" : ", released by the caller") + "]";
    }

    /**
     * An eventfd registered with {@code SetEventOnCompletion}: its anchor forgets the shim handle, then closes the
     * fd, once the waiter's claim and every wait and lease on it are gone.
     */
    private static final class Completion {
        final EventFd eventFd;
        final SyncWaiter fdWaiter;
        final NativeAnchor.Claim claim;

        private Completion(EventFd eventFd, SyncWaiter fdWaiter, NativeAnchor.Claim claim) {
            this.eventFd = eventFd;
            this.fdWaiter = fdWaiter;
            this.claim = claim;
        }

        static Completion register(D3D12FenceWaiter owner, Fence fence, long value) {
            EventFd eventFd = EventFd.create();
            SyncWaiter fdWaiter = eventFd.point().waiter();
            MemorySegment event = fence.d3d12.eventFromEventFd(eventFd.fd());
            if (event == null || event.equals(MemorySegment.NULL)) {
                fdWaiter.close();
                eventFd.close();
                throw new SyncException(io.gpusync.ErrorKind.RECOVERABLE, BackendKind.D3D12,
                        "no D3D12 event handle left for " + owner.describe()
                                + " (the shim keeps at most 65,536 live ones: close waiters you no longer need)", null);
            }
            long eventAddress = event.address();
            NativeAnchor anchor = NativeAnchor.adopt("D3D12 event (eventfd " + eventFd.fd() + ") for "
                    + owner.describe(), () -> {
                fence.d3d12.forgetEvent(MemorySegment.ofAddress(eventAddress)); // no write after this returns
                fdWaiter.close();
                eventFd.close();
            });
            NativeAnchor.Claim claim = anchor.claim(owner);
            int hr;
            try {
                hr = fence.d3d12.setEventOnCompletion(fence.fence, value, event);
            } catch (RuntimeException | Error e) {
                claim.close();
                throw e;
            }
            if (Hresults.failed(hr)) {
                claim.close();
                throw Hresults.failure(hr, "ID3D12Fence::SetEventOnCompletion(" + Long.toUnsignedString(value) + ")");
            }
            return new Completion(eventFd, fdWaiter, claim);
        }
    }
}
