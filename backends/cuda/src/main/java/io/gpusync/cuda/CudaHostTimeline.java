package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A CUDA timeline in host memory: one 64-bit word of pinned, device-mapped host memory
 * ({@code cuMemHostAlloc(CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE)}, initially 0) that the GPU
 * raises in stream order: {@link #advance} enqueues {@code cuStreamWriteValue64_v2(stream, word, next,
 * CU_STREAM_WRITE_VALUE_DEFAULT)} after the work already enqueued on the stream and returns the point at
 * {@code next}. Waiting is a memory read (acquire) instead of a {@code cuEventQuery}: the word flips as soon as an
 * event query would see the work done, at a small fraction of the probe cost — the point of this class when many
 * waits are polled.
 *
 * <p><b>The point.</b> {@link SyncPoint.Cuda} with {@code event} = the word's host address as an 8-byte
 * segment (under unified addressing, which every 64-bit CUDA platform has, it is also the word's device
 * address, so a GPU consumer can {@code cuStreamWaitValue64(stream, event.address(), value, GEQ)} on it; the
 * mapped device pointer proper is {@link #devicePointer()}), and {@code value} = the timeline value. The waiter
 * is {@code CudaTimelineWaiter}: {@code isSignaled} reads the word; {@code await} spins 50 µs, then parks
 * behind a stream callback; {@code onSignal} completes through a stream callback; {@code rebindToValue} works, so
 * {@link SyncPoint#withValue} does.
 *
 * <p><b>Stream callbacks.</b> {@link #advanceWithStreamCallback} also launches a stream callback right after the
 * write, on the same stream, so it covers exactly that value: waits beyond the spin budget are woken by it at no
 * extra enqueue cost, but the stream holds back later work until the stream callback has run (one driver-thread
 * round trip). {@link #advance} launches nothing up front — unless a listener is already registered
 * for a value it writes (then it launches one the same way); a wait that outlives its spin budget
 * arms one on demand behind an event recorded on the last stream and a private stream (the user's stream never
 * waits for it; it may fire later than the value was written — never earlier). When the context gets a sticky
 * error the callbacks run with the error and the waits fail with it; the waiters' periodic health check is the
 * second line.
 *
 * <p><b>Streams.</b> Every stream passed to {@code advance} must belong to this timeline's context (NULL = its
 * legacy default stream). Values must land in order: when an advance uses a different stream than the previous
 * one, the new stream is first made to wait ({@code cuStreamWaitEvent}) for an internal event recorded on the
 * previous stream, so the word can never go backwards.
 *
 * <p><b>Lifetime.</b> The word comes from a per-device pool of pinned slabs ({@code PinnedWordPool}): creating
 * a timeline allocates pinned memory only when the pool is empty (one slab per 512 timelines), and releasing one
 * never frees pinned memory — {@code cuMemHostAlloc}/{@code cuMemFreeHost} synchronize with the device and would
 * stall every CUDA call of the process (forever, behind a host-gated stream). The timeline and every waiter of
 * its points share one anchor: once the timeline and all waiters are closed or unreachable, its events are
 * destroyed and the word goes back to the pool — after its last write has landed (a reaper thread watches words
 * still written to), never under the GPU's feet. The slabs belong to the device's primary context, which gpusync
 * retains: do not {@code cuDevicePrimaryCtxReset} while timelines exist.
 *
 * <p>Thread-safe: advances are serialized; waits run concurrently with them.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
public final class CudaHostTimeline implements AutoCloseable {
    private final TimelineState state;
    private final NativeAnchor anchor;
    private final NativeAnchor.Claim claim;

    private CudaHostTimeline(TimelineState state, NativeAnchor anchor) {
        this.state = state;
        this.anchor = anchor;
        this.claim = anchor.claim(this);
    }

    /**
     * Allocates a timeline in {@code context} (NULL: the calling thread's current context). The calling
     * thread's context stack is unchanged afterwards.
     *
     * @throws io.gpusync.SyncNotSupportedException if the driver is absent or the device cannot map host memory
     */
    public static CudaHostTimeline create(MemorySegment context) {
        return create(context, null);
    }

    /**
     * {@link #create(MemorySegment)}, with {@code afterRelease} run once the timeline's native objects are released
     * (an owner's hold on {@code context} is dropped there, so the context outlives the timeline).
     */
    static CudaHostTimeline create(MemorySegment context, Runnable afterRelease) {
        Objects.requireNonNull(context, "context");
        CudaDriver.ensure();
        MemorySegment ctx = CudaDriver.contextOrCurrent(context, "CudaHostTimeline.create");
        int device;
        try (CudaDriver.Pushed ignored = CudaDriver.Pushed.push(ctx, "CudaHostTimeline.create");
             Arena arena = Arena.ofConfined()) {
            MemorySegment pDev = arena.allocate(ValueLayout.JAVA_INT);
            CudaResults.check(Cuda.cuCtxGetDevice(pDev), "cuCtxGetDevice(" + CudaDriver.hex(ctx) + ")");
            device = pDev.get(ValueLayout.JAVA_INT, 0);
            MemorySegment attr = arena.allocate(ValueLayout.JAVA_INT);
            CudaResults.check(Cuda.cuDeviceGetAttribute(attr, Cuda.CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY(), device),
                    "cuDeviceGetAttribute(CAN_MAP_HOST_MEMORY)");
            if (attr.get(ValueLayout.JAVA_INT, 0) == 0) {
                throw new io.gpusync.SyncNotSupportedException(BackendKind.CUDA,
                        "device " + device + " cannot map host memory: no CUDA host timeline on it");
            }
        }
        CudaDriverService service = CudaDriverService.get();
        PinnedWordPool pool = service.pinnedPool(device);
        MemorySegment word = pool.take(); // outside ctx: a slab, if one is needed, comes from the primary context
        try (CudaDriver.Pushed ignored = CudaDriver.Pushed.push(ctx, "CudaHostTimeline.create");
             Arena arena = Arena.ofConfined()) {
            MemorySegment pd = arena.allocate(ValueLayout.JAVA_LONG);
            CudaResults.check(Cuda.cuMemHostGetDevicePointer_v2(pd, word, 0), "cuMemHostGetDevicePointer_v2");
            TimelineState state = new TimelineState(service, word, pd.get(ValueLayout.JAVA_LONG, 0), ctx, device, pool,
                    afterRelease);
            NativeAnchor anchor = NativeAnchor.adopt("CudaHostTimeline word " + CudaDriver.hex(word),
                    state.releaseAction());
            return new CudaHostTimeline(state, anchor);
        } catch (RuntimeException e) {
            pool.give(word); // nothing was enqueued on it
            throw e;
        }
    }

    /** {@link #create(MemorySegment)} for a raw {@code CUcontext} address ({@code 0} = current). */
    public static CudaHostTimeline create(long context) {
        return create(MemorySegment.ofAddress(context));
    }

    /**
     * Enqueues on {@code stream} the write of the next value (last + 1) and returns the point at it, signalled
     * when the stream has executed everything enqueued before this call.
     *
     * @param stream a stream of this timeline's context; NULL: the context's legacy default stream
     * @throws io.gpusync.SyncException if the write cannot be enqueued
     * @throws IllegalStateException    if this timeline is closed
     */
    public SyncPoint.Cuda advance(MemorySegment stream) {
        return advance(stream, false);
    }

    /**
     * {@link #advance} plus a stream callback launched right after the write on the same stream, so waits on
     * this value beyond the spin budget are woken by it (see the class comment for its cost to the stream).
     */
    public SyncPoint.Cuda advanceWithStreamCallback(MemorySegment stream) {
        return advance(stream, true);
    }

    /** {@link #advance(MemorySegment)} for a raw {@code CUstream} address ({@code 0} = NULL). */
    public SyncPoint.Cuda advance(long stream) {
        return advance(MemorySegment.ofAddress(stream));
    }

    private SyncPoint.Cuda advance(MemorySegment stream, boolean streamCallback) {
        Objects.requireNonNull(stream, "stream");
        return claim.call(() -> point(state.advance(stream, streamCallback)));
    }

    /**
     * The point at {@code value} (unsigned) — one already advanced, or a future one (it is signalled once an
     * advance writes a value at or above it).
     */
    public SyncPoint.Cuda at(long value) {
        return claim.call(() -> point(value));
    }

    private SyncPoint.Cuda point(long value) {
        return new SyncPoint.Cuda(state.word, OptionalLong.of(value), new CudaTimelineWaiter(state, anchor, value));
    }

    /** The value the GPU has written so far (acquire read; unsigned). */
    public long completedValue() {
        return claim.call(() -> state.read());
    }

    /** The last value enqueued by an advance (0 before the first). */
    public long lastAdvanced() {
        return state.lastAdvanced();
    }

    /** The pinned word's host address (8 bytes); also its device address under unified addressing. */
    public MemorySegment hostAddress() {
        return state.word;
    }

    /** The word's device pointer ({@code cuMemHostGetDevicePointer_v2}). */
    public long devicePointer() {
        return state.devicePointer;
    }

    /** The context the word was allocated in. */
    public MemorySegment context() {
        return state.context;
    }

    /** The device ordinal of {@link #context()}. */
    public int device() {
        return state.device;
    }

    /**
     * Fails every wait pending on this timeline with {@code error} and makes later probes of unreached values
     * throw it (its {@link CudaPointOwner} closing).
     */
    void failPending(io.gpusync.SyncException error) {
        state.fail(error);
    }

    /** Drops the timeline's own hold; the word is recycled once every point's waiter is closed too. Idempotent. */
    @Override
    public void close() {
        claim.close();
    }

    @Override
    public String toString() {
        return "CudaHostTimeline[word " + CudaDriver.hex(state.word) + ", context " + CudaDriver.hex(state.context)
                + ", device " + state.device + "]";
    }
}
