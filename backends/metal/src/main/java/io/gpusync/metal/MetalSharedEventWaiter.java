package io.gpusync.metal;

import io.gpusync.BackendKind;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.CheapProbe;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.Timeouts;
import io.gpusync.kit.WaitLoop;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Optional;

/**
 * The waiter of a Metal {@code MTLSharedEvent} at a value ({@link io.gpusync.SyncPoint.Metal}). Made by
 * {@link MetalSharedEvents}, which refuses on every platform but macOS.
 *
 * <ul>
 *   <li>{@link #isSignaled()}: {@code signaledValue >= value} (unsigned) — a driver-side read, no timer; the
 *       probe to use for sub-millisecond polling.</li>
 *   <li>{@link #await}: {@code waitUntilSignaledValue:timeoutMS:} (macOS 12+) in slices of at most 50 ms
 *       through {@link WaitLoop} (interrupts end it with {@link io.gpusync.SyncCancelledException}, the flag
 *       kept); the API counts milliseconds, so each positive slice rounds <em>up</em> (100 µs → 1 ms, never
 *       0) and a slice of "forever" is {@code UINT64_MAX}. A timeout is never reported early.</li>
 * </ul>
 * Metal reports no errors through a shared event (a lost device simply never signals it), so a wait on a
 * point whose producer died ends with its timeout.
 *
 * <p><b>Threading and blocking.</b> Thread-safe; {@link #await} blocks in Metal ({@link BlockingWaiter});
 * {@link #isSignaled()} is a {@link CheapProbe}. <b>Lifetime:</b> an owned event is sent {@code release} once
 * this waiter and every waiter rebound from it are closed (or unreachable) and no wait is in progress.
 */
final class MetalSharedEventWaiter implements BlockingWaiter, CheapProbe {
    private final MemorySegment event;
    private final long value;
    private final NativeAnchor.Claim claim;

    MetalSharedEventWaiter(MemorySegment event, long value, NativeAnchor anchor) {
        this.event = event;
        this.value = value;
        this.claim = anchor.claim(this);
    }

    /** The {@code id<MTLSharedEvent>}. */
    public MemorySegment event() {
        return event;
    }

    /** The value this waiter waits for (unsigned). */
    public long value() {
        return value;
    }

    @Override
    public BackendKind backend() {
        return BackendKind.METAL;
    }

    @Override
    public boolean isSignaled() {
        return claim.call(() -> Long.compareUnsigned(ObjC.signaledValue(event), value) >= 0);
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        claim.run(() -> WaitLoop.await(timeout, WaitLoop.INTERRUPT_CHECK_NANOS, this::slice, this,
                () -> new SyncTimeoutException(BackendKind.METAL, describe() + " not signalled within "
                        + Timeouts.describe(timeout))));
    }

    private boolean slice(long nanos) {
        if (nanos == 0) {
            return Long.compareUnsigned(ObjC.signaledValue(event), value) >= 0;
        }
        return ObjC.waitUntilSignaledValue(event, value, SharedEventTimeouts.timeoutMs(nanos));
    }

    @Override
    public Optional<SyncWaiter> rebindToValue(long newValue) {
        return Optional.of(claim.call(() -> new MetalSharedEventWaiter(event, newValue, claim.anchor())));
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> whenReleased() {
        return claim.anchor().whenReleased();
    }

    @Override
    public void close() {
        claim.close();
    }

    private String describe() {
        return "MTLSharedEvent 0x" + Long.toHexString(event.address()) + " at " + Long.toUnsignedString(value);
    }

    @Override
    public String toString() {
        return "MetalSharedEventWaiter[" + describe() + (claim.isClosed() ? ", closed" : "") + "]";
    }
}
