package io.gpusync;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Backend-specific wait dispatch and lifetime anchor of a {@link SyncPoint} — gpusync's version of the
 * gpu-handle-types' {@code SyncWaiter} trait.
 *
 * <p><b>Lifetime.</b> A waiter owns the native primitive it waits on (a timeline semaphore, a
 * {@code cl_event}, a {@code GLsync}…), unless it was built over a <em>borrowed</em> handle, which the
 * caller destroys once {@link #whenReleased()} has completed. An owned primitive is released exactly once: when {@link #close()} has been called on
 * this waiter and on every waiter {@linkplain #rebindToValue rebound} from it, or when all of them have
 * become unreachable (a {@link java.lang.ref.Cleaner} catches forgotten ones), and never while a wait on it
 * is in progress — a {@code close()} during a wait defers the release until the wait returns. A
 * {@link SyncPoint} holds its waiter, so the primitive lives at least as long as any point referring to it.
 * Waiting on a closed waiter throws {@link IllegalStateException}.
 *
 * <p><b>Threading.</b> Implementations are thread-safe: any number of threads may wait, probe and close
 * concurrently.
 *
 * <p><b>Blocking.</b> {@link #await} blocks the calling thread (in the driver or the OS, or by probing,
 * depending on the backend); do not call it on an event loop or a Reactor non-blocking thread — use the
 * reactor adapter's {@code GpuSync.await}, which picks a non-blocking strategy from the capabilities the
 * waiter advertises through {@link io.gpusync.spi}. {@link #isSignaled()} never blocks for longer than a
 * driver probe.
 *
 * <p><b>Cancellation.</b> A blocking {@code await} cannot be interrupted once inside a native call; callers
 * that need to cancel wait in slices (short timeouts) or use the reactor adapter.
 */
public interface SyncWaiter extends AutoCloseable {

    /**
     * The waiter of {@link SyncPoint#CPU} and {@link SyncPoint#NOOP}: always signalled, backend
     * {@link BackendKind#CPU}, owns nothing.
     */
    SyncWaiter SIGNALLED = new AlwaysSignalled();

    /**
     * Blocks until the sync point is signalled, or throws {@link SyncTimeoutException} once
     * {@code timeout} has elapsed (never earlier).
     *
     * <p>{@link SyncPoint#FOREVER} (and any duration beyond the API's range) maps to the API's native
     * infinite sentinel; {@link Duration#ZERO} is a non-blocking probe; a positive timeout shorter than
     * the API's granularity rounds up to one tick, never down to "do not wait".
     *
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws SyncTimeoutException     if not signalled in time
     * @throws SyncException            on a driver failure ({@link DeviceLostException} when the device is gone)
     * @throws IllegalStateException    if this waiter has been closed
     */
    void await(Duration timeout);

    /** The API this waiter belongs to. */
    BackendKind backend();

    /**
     * gpu-handle-types' {@code as_any} downcast, for cross-API bridges that need the concrete waiter (or an
     * object it exposes, such as a Vulkan device handle): {@code Optional.of(this)} when this waiter is a
     * {@code type}, else empty unless an implementation exposes more.
     */
    default <T> Optional<T> unwrap(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : Optional.empty();
    }

    /**
     * Non-blocking probe. The default calls {@code await(Duration.ZERO)} and maps <em>only</em>
     * {@link SyncTimeoutException} to {@code false}; every other error propagates — folding a driver error
     * into {@code false} makes a caller's polling loop spin forever on a lost device. Backends override it
     * with their direct status query.
     *
     * @throws SyncException on a driver failure
     */
    default boolean isSignaled() {
        try {
            await(Duration.ZERO);
            return true;
        } catch (SyncTimeoutException notYet) {
            return false;
        }
    }

    /**
     * This waiter as a {@link CudaEventWaiter}, when it is one: the route by which consumers reach
     * {@link CudaEventWaiter#waitOnForeignStream} without knowing the concrete type. Empty by default.
     */
    default Optional<CudaEventWaiter> asCudaEventWaiter() {
        return Optional.empty();
    }

    /**
     * A waiter on the same primitive at {@code value} (unsigned), holding the same lifetime anchor and
     * carrying over no state that was only valid for this waiter's value. Empty (the default) when the
     * primitive carries no value — binary semaphores, fences, {@code GLsync}, {@code cl_event}: not a
     * failure, there is nothing to disagree about.
     *
     * <p>Code that mints a point at a value other than its template's must route the waiter through here
     * ({@link SyncPoint#withValue} does), so the GPU-side value and the CPU-side wait cannot diverge.
     */
    default Optional<SyncWaiter> rebindToValue(long value) {
        return Optional.empty();
    }

    /**
     * Completes once gpusync has let go of this waiter's primitive for good: every waiter sharing it is closed
     * (or unreachable), no wait, probe or driver callback on it is in progress, and an owned primitive has
     * been released. From then on gpusync makes no call on the handle, so this is when the owner of a
     * <em>borrowed</em> primitive may destroy it — not when a wait's {@code Mono} ends: a cancelled or
     * timed-out wait's thread may still be inside the driver's wait on it. Completes on the thread that let go
     * last, or on gpusync's housekeeping thread where that thread may not run such code (a driver callback,
     * the {@code Cleaner}); put dependants that block on an executor of their own ({@code thenRunAsync}).
     * The default (a waiter over no native primitive) is already complete.
     */
    default CompletionStage<Void> whenReleased() {
        return CompletableFuture.completedStage(null);
    }

    /**
     * Drops this waiter's claim on its primitive. The primitive is released once every waiter sharing it
     * is closed (or unreachable) and no wait on it is in progress — or later, off the calling thread, where the
     * driver may still use it (an OpenCL command that events it waits on may still notify). Idempotent; never blocks on the GPU;
     * safe in a wait's {@code doOnError}/{@code doFinally}. Borrowed primitives are never released by gpusync:
     * destroy them after {@link #whenReleased()}. The default does nothing (nothing owned).
     */
    @Override
    default void close() {
    }
}
