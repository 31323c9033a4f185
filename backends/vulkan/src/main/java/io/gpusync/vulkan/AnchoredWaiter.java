package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncException;
import io.gpusync.SyncWaiter;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.Timeouts;
import io.gpusync.kit.WaitLoop;

import java.lang.ref.Reference;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What every Vulkan waiter shares: a claim on its primitive's {@link NativeAnchor} and a claim on its
 * device's, both entered for the duration of a wait or probe ({@link #pinned}), both dropped by
 * {@link #close()} (primitive first, so an owned handle is destroyed while its device is alive).
 */
abstract class AnchoredWaiter implements SyncWaiter {
    final VulkanDevice view;
    final DeviceState state;
    private final NativeAnchor.Claim claim;
    private final NativeAnchor.Claim deviceClaim;

    AnchoredWaiter(VulkanDevice view, NativeAnchor primitive) {
        this.view = view;
        this.state = view.state;
        this.claim = primitive.claim(this);
        try {
            this.deviceClaim = state.anchor.claim(this);
        } catch (RuntimeException e) {
            claim.close();
            throw e;
        }
    }

    /** The primitive's anchor (shared with every waiter rebound from this one). */
    final NativeAnchor anchor() {
        return claim.anchor();
    }

    /**
     * Runs a wait or probe with the device and the primitive held alive until it returns.
     *
     * @throws IllegalStateException if this waiter is closed (the action does not run)
     */
    final <T> T pinned(Supplier<T> action) {
        requireOpen();
        try {
            return deviceClaim.call(() -> claim.call(action));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * A blocking wait through {@link WaitLoop} (50 ms slices, its interrupt rule) with the device and the
     * primitive held; fails fast on a device known to be lost.
     */
    final void awaitInSlices(Duration timeout, WaitLoop.Slice slice, Supplier<? extends SyncException> timedOut) {
        Timeouts.requireValid(timeout);
        pinned(() -> {
            state.checkNotLost(toString());
            WaitLoop.await(timeout, WaitLoop.INTERRUPT_CHECK_NANOS, slice, this, timedOut);
            return null;
        });
    }

    /** A slice's answer for {@code r}: signalled on success, not yet on {@code VK_TIMEOUT}, else the failure. */
    final boolean sliceResult(int r, String call) {
        if (r == VkResults.SUCCESS) {
            return true;
        }
        if (r != VkResults.TIMEOUT) {
            throw state.failure(r, call);
        }
        return false;
    }

    /**
     * Starts a wait that spans several waiters (a wait set's members): like {@link #pinned} until
     * {@link #unpin()}; {@code false} if this waiter is closed.
     */
    final boolean tryPin() {
        if (claim.isClosed()) {
            return false;
        }
        try {
            deviceClaim.enter();
        } catch (IllegalStateException closed) {
            return false;
        }
        try {
            claim.enter();
            return true;
        } catch (IllegalStateException closed) {
            deviceClaim.exit();
            return false;
        }
    }

    /** Ends a {@link #tryPin()}. */
    final void unpin() {
        claim.exit();
        deviceClaim.exit();
    }

    final void requireOpen() {
        if (claim.isClosed()) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    @Override
    public final BackendKind backend() {
        return BackendKind.VULKAN;
    }

    /** Also exposes the {@link VulkanDevice} that minted this waiter. */
    @Override
    public final <T> Optional<T> unwrap(Class<T> type) {
        if (type.isInstance(this)) {
            return Optional.of(type.cast(this));
        }
        return type.isInstance(view) ? Optional.of(type.cast(view)) : Optional.empty();
    }

    @Override
    public final java.util.concurrent.CompletionStage<Void> whenReleased() {
        return claim.anchor().whenReleased();
    }

    /** Drops this waiter's claims (idempotent); see {@link SyncWaiter#close()}. */
    @Override
    public final void close() {
        claim.close();
        deviceClaim.close();
    }
}
