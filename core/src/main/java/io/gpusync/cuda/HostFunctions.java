package io.gpusync.cuda;

import io.gpusync.SyncException;
import io.gpusync.bindings.cuda.CUhostFn;
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
 * gpusync's CUDA host functions: <em>one</em> upcall stub for the whole JVM (in the global arena, so it can
 * never be freed while the driver may still call it), and a {@code long} key in {@code userData} that maps to a
 * {@link Slot} in an {@link UpcallRegistry} (the registry OpenCL's callbacks use too). When the driver runs the host function, the slot is removed and fired;
 * cancelling a registration removes its key, so the host function (which still runs later: a launched host
 * function cannot be withdrawn) finds nothing and returns. Whoever removes the key — the host function, the
 * canceller, or {@link #failContext}/{@link #failOwner} — owns the outcome, so each slot fires, fails or is
 * cancelled exactly once.
 *
 * <p><b>Faults.</b> Host functions are <em>not called at all</em> once their context has a sticky error (see
 * {@code cuLaunchHostFunc}), so every registration names its context and {@link CudaFaultWatch} re-queries each
 * context that has registrations outstanding; a sticky error fails all of that context's slots through
 * {@link Slot#fail}. A registration may also name an owner (an owned producer such as {@link CudaWorkQueue});
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
            CudaFaultWatch.watch();
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
     * {@code cuLaunchHostFunc(stream, stub, key)}: the host function runs after all work enqueued on
     * {@code stream} so far and holds back work enqueued after it until it returns. The caller has the
     * stream's context current (or pushed) when {@code stream} is NULL.
     *
     * @return the CUresult
     */
    static int launch(MemorySegment stream, long key) {
        return Cuda.cuLaunchHostFunc(stream, Stub.STUB, MemorySegment.ofAddress(key));
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
                CudaResults.check(launch(stream, key), "cuLaunchHostFunc(private stream)");
            } finally {
                CudaDriver.logRelease(Cuda.cuStreamDestroy_v2(stream), "cuStreamDestroy_v2(private stream)");
            }
        }
    }

    /** The upcall: never throws; releases it triggers move to the housekeeping thread (see NativeAnchor). */
    private static void fire(MemorySegment userData) {
        try {
            HostFunctionBudget.hostFunctionRan(userData.address());
        } catch (Throwable t) {
            // nothing may escape into the driver; the room is lost at worst
        }
        SLOTS.fire(userData.address(), r -> {
            uncount(r);
            r.slot().fire();
        });
    }

    /** The one upcall stub, created on first use (only after the driver is loaded). */
    private static final class Stub {
        static final MemorySegment STUB = CUhostFn.allocate(HostFunctions::fire, Arena.global());
    }
}
