package io.gpusync.cuda;

import io.gpusync.SyncException;
import io.gpusync.bindings.cuda.CUstreamCallback;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.internal.UpcallRegistry;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
/**
 * gpusync's CUDA stream callbacks ({@code cuStreamAddCallback}): <em>one</em> upcall stub per service (in the global
 * arena, so it is never freed while the driver may still call it), and a {@code long} key in {@code userData} that
 * maps to a {@link Slot} in an {@link UpcallRegistry}. When the driver runs the callback, the slot is removed and
 * fired; cancelling a registration removes its key, so the callback (which still runs later: a launched callback
 * cannot be withdrawn) finds nothing and returns. Whoever removes the key — the callback, the canceller, or
 * {@link #failContext}/{@link #failOwner} — owns the outcome, so each slot fires, fails or is cancelled exactly once.
 *
 * <p><b>Why stream callbacks.</b> Unlike a {@code cuLaunchHostFunc} host function, which is not called at all once
 * its context has a sticky error, a stream callback is called with the error. A callback that reports an error
 * fires nothing: it hands the error to {@link CudaFaultWatch}, which classifies it (driver calls, which a callback
 * must not make) and fails every registration of the faulted context. A context with a callback in flight
 * therefore reports its own faults ({@link #reportsOwnFaults}); the watch queries the others. A stream being
 * captured into a graph takes no stream callbacks ({@code CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED}). A registration
 * may name an owner (a {@link CudaPointOwner}); closing the owner fails its slots with
 * {@link io.gpusync.SyncCancelledException}.
 *
 * <p><b>Threading.</b> Thread-safe. Callbacks run on a driver-owned thread and must not call CUDA, so the upcall
 * only hands over: slots set flags, unpark threads or call a {@link io.gpusync.spi.SignalListener}; nothing here
 * takes a lock held across a CUDA call, and releases a slot triggers are moved off the driver thread
 * ({@code NativeAnchor}). An exception escaping an upcall would crash the JVM, so every throwable is caught.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
final class StreamCallbacks {
    private static final System.Logger LOG = System.getLogger(StreamCallbacks.class.getName());
    private final CudaDriverService service;
    private final UpcallRegistry<Registration> slots = new UpcallRegistry<>("CUDA stream callback");
    /** Outstanding registrations per context address: what {@link CudaFaultWatch} watches. */
    private final ConcurrentHashMap<Long, Integer> perContext = new ConcurrentHashMap<>();
    /** Stream callbacks launched and not yet run (cancelled ones included), key → context address. */
    private final ConcurrentHashMap<Long, Long> inFlight = new ConcurrentHashMap<>();
    /** How many of {@link #inFlight} each context has: one is enough for the context to report its faults. */
    private final ConcurrentHashMap<Long, Integer> inFlightPerContext = new ConcurrentHashMap<>();
    /** The upcall stub into {@link #ran}, made on the first launch (only after the driver is loaded). */
    private volatile MemorySegment stub;

    StreamCallbacks(CudaDriverService service) {
        this.service = service;
    }

    /** What a stream callback completes. {@link #fire()} runs on a driver thread and only hands over. */
    interface Slot {
        /** The stream callback ran: the work it stands behind is complete. */
        void fire();

        /**
         * The stream callback's work will never complete or no longer matters: its context has a sticky error
         * ({@link io.gpusync.DeviceLostException}) or its owner closed ({@link io.gpusync.SyncCancelledException}).
         * Runs on the fault watch's or the closing thread; only hands over.
         */
        void fail(SyncException error);
    }

    private record Registration(long context, Object owner, Slot slot) {
    }

    /**
     * Registers {@code slot} under a fresh key (never 0), watched for faults of {@code context} (its address must
     * be the real context, not NULL) and failed when {@code owner} (may be null) closes.
     */
    long register(MemorySegment context, Object owner, Slot slot) {
        long ctx = context.address();
        boolean first = perContext.merge(ctx, 1, Integer::sum) == 1;
        long key = slots.register(new Registration(ctx, owner, slot));
        if (first) {
            service.faultWatch().registered();
        }
        return key;
    }

    /** Removes {@code key}; {@code true} if this call removed it (the slot then never fires). */
    boolean cancel(long key) {
        return remove(key) != null;
    }

    private Registration remove(long key) {
        Registration r = slots.remove(key);
        if (r != null) {
            uncount(r);
        }
        return r;
    }

    private void uncount(Registration r) {
        perContext.computeIfPresent(r.context(), (k, n) -> n == 1 ? null : n - 1);
    }

    /** Registered slots whose stream callback has neither run nor been cancelled (for tests and leak checks). */
    int pending() {
        return slots.pending();
    }

    /** The contexts that have registrations outstanding (a snapshot). */
    Set<Long> watchedContexts() {
        return Set.copyOf(perContext.keySet());
    }

    /**
     * Whether {@code context} has a stream callback in flight: the driver will call it with the error if the context
     * faults, so the context's faults reach {@link CudaFaultWatch} without a query.
     */
    boolean reportsOwnFaults(long context) {
        return inFlightPerContext.containsKey(context);
    }

    /** Stream callbacks launched and not yet run, cancelled ones included (tests). */
    int inFlight() {
        return inFlight.size();
    }

    /** Whether {@code key} is still registered (neither fired, failed nor cancelled). */
    boolean registered(long key) {
        return slots.isPending(key);
    }

    /** Fires {@code key}'s slot as its stream callback would (for an arm completed by a probe instead). */
    void fireKey(long key) {
        slots.fire(key, r -> {
            uncount(r);
            r.slot().fire();
        });
    }

    /** Fails {@code key}'s slot with {@code error} if it is still registered. */
    void failKey(long key, SyncException error) {
        Registration r = remove(key);
        if (r != null) {
            try {
                r.slot().fail(error);
            } catch (RuntimeException | Error t) {
                LOG.log(System.Logger.Level.WARNING, "failing a CUDA stream-callback registration threw", t);
            }
        }
    }

    /**
     * Fails every slot registered for {@code context} with {@code error} (a sticky error: none of its host
     * functions will run, so their room in {@link StreamCallbackBudget} is given back); returns how many it failed.
     */
    int failContext(long context, SyncException error) {
        int failed = failWhere(r -> r.context() == context, error); // first: its deferred arms are dropped, not armed
        service.budget().contextFailed(context);
        return failed;
    }

    /** Fails every slot registered for {@code owner} with {@code error}; returns how many it failed. */
    int failOwner(Object owner, SyncException error) {
        return failWhere(r -> r.owner() == owner, error);
    }

    private int failWhere(java.util.function.Predicate<Registration> which, SyncException error) {
        List<Slot> failed = new ArrayList<>();
        slots.forEachPending((key, r) -> {
            if (which.test(r) && remove(key) != null) {
                failed.add(r.slot());
            }
        });
        for (Slot s : failed) {
            try {
                s.fail(error);
            } catch (RuntimeException | Error t) { // one slot's listener must not keep the others pending
                LOG.log(System.Logger.Level.WARNING, "failing a CUDA stream-callback registration threw", t);
            }
        }
        return failed.size();
    }

    /** Whether the calling thread is inside one of gpusync's stream callbacks (a driver thread). */
    boolean onDriverThread() {
        return UpcallRegistry.inUpcall();
    }

    /**
     * {@code cuStreamAddCallback(stream, stub, key, 0)}: the callback runs after all work enqueued on
     * {@code stream} so far — with the context's error if it faults meanwhile — and holds back work enqueued after
     * it until it returns. The caller has the stream's context current (or pushed) when {@code stream} is NULL.
     * {@code key} must be registered.
     *
     * @return the CUresult
     */
    int launch(MemorySegment stream, long key) {
        takingOff(key); // counted before the launch: the callback may run before the launch returns
        int result = Cuda.cuStreamAddCallback(stream, stub(), MemorySegment.ofAddress(key), 0);
        if (result != CudaResults.SUCCESS) {
            landed(key); // it will never run
        }
        return result;
    }

    /** {@code key}'s callback is being launched: count it in flight for its context (if still registered). */
    void takingOff(long key) {
        Registration r = slots.peek(key);
        if (r != null) {
            inFlight.put(key, r.context());
            inFlightPerContext.merge(r.context(), 1, Integer::sum);
        }
    }

    /**
     * {@code key}'s callback ran (or was never launched): it is no longer in flight.
     *
     * @return its context if it was the context's last callback in flight, else 0
     */
    private long landed(long key) {
        Long ctx = inFlight.remove(key);
        if (ctx == null) {
            return 0;
        }
        return inFlightPerContext.computeIfPresent(ctx, (k, n) -> n == 1 ? null : n - 1) == null ? ctx : 0;
    }

    /**
     * Launches {@code key}'s stream callback to run once the work currently captured by {@code event} has completed,
     * without touching the stream that recorded it: pushes {@code context} (NULL: the caller has it current),
     * creates a private non-blocking stream, makes it wait for the event ({@code cuStreamWaitEvent}), launches the
     * stream callback on it and destroys the stream at once ({@code cuStreamDestroy} releases it when its pending
     * work is done). The user's streams never carry our stream callback, so they never stall for a driver-thread
     * round trip. The driver holds only so many of these: callers go through {@link StreamCallbackBudget#arm},
     * which calls this only when there is room.
     *
     * @throws io.gpusync.SyncException (classified by {@link CudaResults}) if a call fails; the key is then
     *                                  still registered (the caller cancels it)
     */
    void launchAfterEvent(MemorySegment context, MemorySegment event, long key) {
        try (CudaDriver.Pushed ignored = CudaDriver.Pushed.pushHeld(context, "arming a stream callback");
             Arena arena = Arena.ofConfined()) {
            MemorySegment pStream = arena.allocate(ValueLayout.ADDRESS);
            CudaResults.check(Cuda.cuStreamCreate(pStream, Cuda.CU_STREAM_NON_BLOCKING()),
                    "cuStreamCreate(CU_STREAM_NON_BLOCKING) for a stream callback");
            MemorySegment stream = pStream.get(ValueLayout.ADDRESS, 0);
            try {
                CudaResults.check(Cuda.cuStreamWaitEvent(stream, event, 0),
                        "cuStreamWaitEvent(private stream, event " + CudaDriver.hex(event) + ")");
                CudaResults.check(launch(stream, key), "cuStreamAddCallback(private stream)");
            } finally {
                CudaDriver.logRelease(Cuda.cuStreamDestroy_v2(stream), "cuStreamDestroy_v2(private stream)");
            }
        }
    }

    /**
     * The upcall: never throws; releases it triggers move to the housekeeping thread (see NativeAnchor). With an
     * error it fires nothing: the error goes to the fault watch, which fails the context's registrations.
     */
    void ran(MemorySegment stream, int status, MemorySegment userData) {
        long key = userData.address();
        try {
            service.budget().streamCallbackRan(key);
        } catch (Throwable t) {
            // nothing may escape into the driver; the room is lost at worst
        }
        if (status != CudaResults.SUCCESS) {
            try {
                landed(key);
                service.faultWatch().reported(key, status);
            } catch (Throwable t) {
                // nothing may escape into the driver; the watch's own checks find the fault later
            }
            return;
        }
        slots.fire(key, r -> {
            uncount(r);
            r.slot().fire();
        });
        try {
            if (landed(key) != 0 && service.budget().anyDeferred()) {
                service.faultWatch().watch(); // a context's last callback ran: its deferred waits need the watch now
            }
        } catch (Throwable t) {
            // nothing may escape into the driver
        }
    }

    private MemorySegment stub() {
        MemorySegment s = stub;
        if (s == null) {
            synchronized (this) {
                s = stub;
                if (s == null) {
                    s = CUstreamCallback.allocate(this::ran, Arena.global());
                    stub = s;
                }
            }
        }
        return s;
    }
}
