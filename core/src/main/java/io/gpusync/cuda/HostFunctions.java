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
import io.gpusync.cuda.CudaProducers.CudaWorkQueue;

/**
 * gpusync's CUDA host callbacks: <em>one</em> upcall stub for the whole JVM (in the global arena, so it can
 * never be freed while the driver may still call it), and a {@code long} key in {@code userData} that maps to a
 * {@link Slot} in an {@link UpcallRegistry} (the registry OpenCL's callbacks use too). When the driver runs the
 * callback, the slot is removed and fired; cancelling a registration removes its key, so the callback (which still
 * runs later: a launched callback cannot be withdrawn) finds nothing and returns. Whoever removes the key — the
 * callback, the canceller, or {@link #failContext}/{@link #failOwner} — owns the outcome, so each slot fires, fails
 * or is cancelled exactly once.
 *
 * <p><b>Stream callbacks, not host functions.</b> The callbacks are launched with {@code cuStreamAddCallback}, not
 * {@code cuLaunchHostFunc}: both run after the work in front of them, hold back the work behind them, and cost the
 * same (measured on the H200: launch → call p50 19.5 / 146.3 / 1,110 µs behind kernels of 1 µs / 100 µs / 1 ms for
 * both), but a host function is <em>not called at all</em> once its context has a sticky error, while a stream
 * callback is called with the error — measured there ≈ 0.1 ms after a kernel trapped (7–16 ms with 165 waits in
 * flight, the driver's pace: see {@link CudaFaultWatch}), on the trapping stream, on other streams behind a 2 s
 * kernel or a closed host gate, and on private streams waiting on events of either. A
 * callback that reports an error does not fire its slot: it hands the error to {@link CudaFaultWatch}, which
 * classifies it (that takes driver calls, which a callback must not make) and fails every registration of the
 * faulted context through {@link Slot#fail}. A context with at least one callback in flight therefore reports its
 * own faults ({@link #reportsOwnFaults}); the watch re-queries only the contexts that have registrations but no
 * callback in flight (waits deferred by {@link HostFunctionBudget} for want of room), and the others as a slow
 * backstop. A stream that is being captured into a graph does not take stream callbacks
 * ({@code CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED}): covering a host-timeline value advanced on such a stream fails
 * with that error. A registration may also name an owner (an owned producer such as {@link CudaWorkQueue});
 * closing the owner fails its slots with {@link io.gpusync.SyncCancelledException}.
 *
 * <p>Host functions run on a driver-owned thread, must not call CUDA ({@code CUDA_ERROR_NOT_PERMITTED} at
 * best, a deadlock at worst). The upcall therefore only hands over: slots set flags, unpark threads or call a
 * {@link io.gpusync.spi.SignalListener}; nothing here takes a lock that is held across a CUDA call. Native
 * release work that a slot would trigger is moved off the driver thread (see
 * {@code NativeAnchor}, which runs a release triggered inside an upcall on the housekeeping thread). An exception
 * escaping an upcall would crash the JVM, so every throwable
 * is caught and logged.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
final class HostFunctions {
    private static final System.Logger LOG = System.getLogger(HostFunctions.class.getName());
    private static final UpcallRegistry<Registration> SLOTS = new UpcallRegistry<>("CUDA host function");
    /** Outstanding registrations per context address: what {@link CudaFaultWatch} watches. */
    private static final ConcurrentHashMap<Long, Integer> PER_CONTEXT = new ConcurrentHashMap<>();
    /** Stream callbacks launched and not yet run (cancelled ones included), key → context address. */
    private static final ConcurrentHashMap<Long, Long> IN_FLIGHT = new ConcurrentHashMap<>();
    /** How many of {@link #IN_FLIGHT} each context has: one is enough for the context to report its faults. */
    private static final ConcurrentHashMap<Long, Integer> IN_FLIGHT_PER_CONTEXT = new ConcurrentHashMap<>();

    private HostFunctions() {
    }

    /** What a host function completes. {@link #fire()} runs on a driver thread and only hands over. */
    interface Slot {
        /** The host function ran: the work it stands behind is complete. */
        void fire();

        /**
         * The host function will never run or no longer matters: its context has a sticky error
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
    static long register(MemorySegment context, Object owner, Slot slot) {
        long ctx = context.address();
        boolean first = PER_CONTEXT.merge(ctx, 1, Integer::sum) == 1;
        long key = SLOTS.register(new Registration(ctx, owner, slot));
        if (first) {
            CudaFaultWatch.registered();
        }
        return key;
    }

    /** Removes {@code key}; {@code true} if this call removed it (the slot then never fires). */
    static boolean cancel(long key) {
        return remove(key) != null;
    }

    private static Registration remove(long key) {
        Registration r = SLOTS.remove(key);
        if (r != null) {
            uncount(r);
        }
        return r;
    }

    private static void uncount(Registration r) {
        PER_CONTEXT.computeIfPresent(r.context(), (k, n) -> n == 1 ? null : n - 1);
    }

    /** Registered slots whose host function has neither run nor been cancelled (for tests and leak checks). */
    static int pending() {
        return SLOTS.pending();
    }

    /** The contexts that have registrations outstanding (a snapshot). */
    static Set<Long> watchedContexts() {
        return Set.copyOf(PER_CONTEXT.keySet());
    }

    /**
     * Whether {@code context} has a stream callback in flight: the driver will call it with the error if the context
     * faults, so the context's faults reach {@link CudaFaultWatch} without a query.
     */
    static boolean reportsOwnFaults(long context) {
        return IN_FLIGHT_PER_CONTEXT.containsKey(context);
    }

    /** Stream callbacks launched and not yet run, cancelled ones included (tests). */
    static int inFlight() {
        return IN_FLIGHT.size();
    }

    /** Whether {@code key} is still registered (neither fired, failed nor cancelled). */
    static boolean registered(long key) {
        return SLOTS.isPending(key);
    }

    /** Fires {@code key}'s slot as its host function would (for an arm completed by a probe instead). */
    static void fireKey(long key) {
        SLOTS.fire(key, r -> {
            uncount(r);
            r.slot().fire();
        });
    }

    /** Fails {@code key}'s slot with {@code error} if it is still registered. */
    static void failKey(long key, SyncException error) {
        Registration r = remove(key);
        if (r != null) {
            try {
                r.slot().fail(error);
            } catch (RuntimeException | Error t) {
                LOG.log(System.Logger.Level.WARNING, "failing a CUDA host-function registration threw", t);
            }
        }
    }

    /**
     * Fails every slot registered for {@code context} with {@code error} (a sticky error: none of its host
     * functions will run, so their room in {@link HostFunctionBudget} is given back); returns how many it failed.
     */
    static int failContext(long context, SyncException error) {
        int failed = failWhere(r -> r.context() == context, error); // first: its deferred arms are dropped, not armed
        HostFunctionBudget.contextFailed(context);
        return failed;
    }

    /** Fails every slot registered for {@code owner} with {@code error}; returns how many it failed. */
    static int failOwner(Object owner, SyncException error) {
        return failWhere(r -> r.owner() == owner, error);
    }

    private static int failWhere(java.util.function.Predicate<Registration> which, SyncException error) {
        List<Slot> failed = new ArrayList<>();
        SLOTS.forEachPending((key, r) -> {
            if (which.test(r) && remove(key) != null) {
                failed.add(r.slot());
            }
        });
        for (Slot s : failed) {
            try {
                s.fail(error);
            } catch (RuntimeException | Error t) { // one slot's listener must not keep the others pending
                LOG.log(System.Logger.Level.WARNING, "failing a CUDA host-function registration threw", t);
            }
        }
        return failed.size();
    }

    /** Whether the calling thread is inside one of gpusync's host functions (a driver thread). */
    static boolean onDriverThread() {
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
    static int launch(MemorySegment stream, long key) {
        takingOff(key); // counted before the launch: the callback may run before the launch returns
        int result = Cuda.cuStreamAddCallback(stream, Stub.STUB, MemorySegment.ofAddress(key), 0);
        if (result != CudaResults.SUCCESS) {
            landed(key); // it will never run
        }
        return result;
    }

    /** {@code key}'s callback is being launched: count it in flight for its context (if still registered). */
    static void takingOff(long key) {
        Registration r = SLOTS.peek(key);
        if (r != null) {
            IN_FLIGHT.put(key, r.context());
            IN_FLIGHT_PER_CONTEXT.merge(r.context(), 1, Integer::sum);
        }
    }

    /**
     * {@code key}'s callback ran (or was never launched): it is no longer in flight.
     *
     * @return its context if it was the context's last callback in flight, else 0
     */
    private static long landed(long key) {
        Long ctx = IN_FLIGHT.remove(key);
        if (ctx == null) {
            return 0;
        }
        return IN_FLIGHT_PER_CONTEXT.computeIfPresent(ctx, (k, n) -> n == 1 ? null : n - 1) == null ? ctx : 0;
    }

    /**
     * Launches {@code key}'s host function to run once the work currently captured by {@code event} has completed,
     * without touching the stream that recorded it: pushes {@code context} (NULL: the caller has it current),
     * creates a private non-blocking stream, makes it wait for the event ({@code cuStreamWaitEvent}), launches the
     * host function on it and destroys the stream at once ({@code cuStreamDestroy} releases it when its pending
     * work is done). The user's streams never carry our host function, so they never stall for a driver-thread
     * round trip. The driver holds only so many of these: callers go through {@link HostFunctionBudget#arm},
     * which calls this only when there is room.
     *
     * @throws io.gpusync.SyncException (classified by {@link CudaResults}) if a call fails; the key is then
     *                                  still registered (the caller cancels it)
     */
    static void launchAfterEvent(MemorySegment context, MemorySegment event, long key) {
        try (CudaDriver.Pushed ignored = CudaDriver.Pushed.pushHeld(context, "arming a host function");
             Arena arena = Arena.ofConfined()) {
            MemorySegment pStream = arena.allocate(ValueLayout.ADDRESS);
            CudaResults.check(Cuda.cuStreamCreate(pStream, Cuda.CU_STREAM_NON_BLOCKING()),
                    "cuStreamCreate(CU_STREAM_NON_BLOCKING) for a host function");
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
    static void ran(MemorySegment stream, int status, MemorySegment userData) {
        long key = userData.address();
        try {
            HostFunctionBudget.hostFunctionRan(key);
        } catch (Throwable t) {
            // nothing may escape into the driver; the room is lost at worst
        }
        if (status != CudaResults.SUCCESS) {
            try {
                landed(key);
                CudaFaultWatch.reported(key, status);
            } catch (Throwable t) {
                // nothing may escape into the driver; the watch's own checks find the fault later
            }
            return;
        }
        SLOTS.fire(key, r -> {
            uncount(r);
            r.slot().fire();
        });
        try {
            if (landed(key) != 0 && HostFunctionBudget.anyDeferred()) {
                CudaFaultWatch.watch(); // a context's last callback ran: its deferred waits need the watch now
            }
        } catch (Throwable t) {
            // nothing may escape into the driver
        }
    }

    /** The one upcall stub, created on first use (only after the driver is loaded). */
    private static final class Stub {
        static final MemorySegment STUB = CUstreamCallback.allocate(HostFunctions::ran, Arena.global());
    }
}
