package io.gpusync.cuda;

import io.gpusync.SyncPoint;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The owner of a group of CUDA points that end together: a component of the application that records events and
 * advances host timelines on streams it will shut down (a stream pool, a renderer, a test's work queue) mints them
 * here, and {@link #close()} fails every wait still pending on them with {@link io.gpusync.SyncCancelledException} at
 * once — engine and blocking waits alike, {@code FOREVER} included — instead of leaving them to wait for work that
 * the owner will never finish. Later probes and waits on those points fail the same way. The native objects stay
 * valid until their points are released, so nothing is touched after it is freed; each factory takes an
 * {@code afterRelease} action that runs once its point's native objects are destroyed (an owner's hold on the
 * context is dropped there, so the context outlives its points).
 *
 * <p><b>Threading.</b> Thread-safe. <b>Blocking.</b> Nothing here blocks: {@link #close()} fails waits without a
 * driver call. <b>Cancellation.</b> {@link #close()} is the cancellation; it is idempotent, and minting after it
 * throws {@link IllegalStateException}.
 */
public final class CudaPointOwner implements AutoCloseable {
    private final OwnerLifetime lifetime;
    private final List<CudaHostTimeline> timelines = new ArrayList<>(); // guarded by this, until close
    /** Each stream's order of the events {@link #recordOrderedEvent} recorded on it, by stream address. */
    private final Map<Long, StreamOrder> orders = new HashMap<>(); // guarded by this
    private boolean closed; // guarded by this

    private CudaPointOwner(String name) {
        this.lifetime = new OwnerLifetime(CudaDriverService.get(), name);
    }

    /**
     * A new owner, named {@code name} in the errors of the waits it cancels. Loads the CUDA driver
     * ({@code cuInit}) if this process has not yet.
     *
     * @throws io.gpusync.SyncNotSupportedException if there is no CUDA driver
     */
    public static CudaPointOwner open(String name) {
        Objects.requireNonNull(name, "name");
        CudaDriver.ensure();
        return new CudaPointOwner(name);
    }

    /**
     * {@link CudaEvents#record(MemorySegment, MemorySegment)} under this owner: an owned event recorded on
     * {@code stream} of {@code context}, whose waits fail once this owner is closed; {@code afterRelease} runs once
     * the event is destroyed.
     *
     * @throws IllegalStateException if this owner is closed
     */
    public SyncPoint.CudaEvent recordEvent(MemorySegment stream, MemorySegment context, Runnable afterRelease) {
        Objects.requireNonNull(afterRelease, "afterRelease");
        requireOpen();
        return CudaEvents.record(stream, context, lifetime, afterRelease);
    }

    /**
     * {@link #recordEvent} on a stream whose events this owner records in the stream's order, and that the application
     * destroys only after closing this owner: the waited-on events of one such stream share one stream callback,
     * behind the oldest of them, and a wake-up completes every event the stream has run in one sweep (CUDA runs a
     * stream in order), so a burst of completions costs one callback, not one per event. Calls for one stream are
     * numbered in the order they record, under this owner's lock.
     *
     * @throws IllegalStateException if this owner is closed
     */
    public SyncPoint.CudaEvent recordOrderedEvent(MemorySegment stream, MemorySegment context, Runnable afterRelease) {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(afterRelease, "afterRelease");
        MemorySegment ctx = CudaDriver.contextOrCurrent(context, "CudaPointOwner.recordOrderedEvent");
        synchronized (this) {
            requireOpenLocked();
            StreamOrder order = orders.computeIfAbsent(stream.address(),
                    a -> new StreamOrder(CudaDriverService.get(), ctx, lifetime));
            return CudaEvents.record(stream, ctx, lifetime, afterRelease, order);
        }
    }

    /** How many waited-on events of {@code stream}'s order are still pending (tests). */
    synchronized int pendingInOrder(MemorySegment stream) {
        StreamOrder order = orders.get(stream.address());
        return order == null ? 0 : order.pending();
    }

    /**
     * {@link CudaHostTimeline#create(MemorySegment)} under this owner: closing the owner fails every wait pending on
     * the timeline and makes later probes of values it has not reached throw; {@code afterRelease} runs once the
     * timeline's native objects are released. The owner keeps the timeline object until it is closed.
     *
     * @throws IllegalStateException if this owner is closed
     */
    public CudaHostTimeline createTimeline(MemorySegment context, Runnable afterRelease) {
        Objects.requireNonNull(afterRelease, "afterRelease");
        CudaHostTimeline timeline = CudaHostTimeline.create(context, afterRelease);
        synchronized (this) {
            if (!closed) {
                timelines.add(timeline);
                return timeline;
            }
        }
        timeline.close();
        throw new IllegalStateException(this + " is closed");
    }

    /** Fails every wait pending on this owner's points with {@link io.gpusync.SyncCancelledException}. Idempotent. */
    @Override
    public void close() {
        List<CudaHostTimeline> ended;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            ended = List.copyOf(timelines);
            timelines.clear();
        }
        lifetime.end();
        ended.forEach(t -> t.failPending(lifetime.cancelled()));
    }

    private synchronized void requireOpen() {
        requireOpenLocked();
    }

    private void requireOpenLocked() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    @Override
    public String toString() {
        return "CudaPointOwner[" + lifetime + "]";
    }
}
