package io.gpusync.cuda;

import io.gpusync.bindings.cuda.CUhostFn;
import io.gpusync.bindings.cuda.Cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * gpusync's CUDA host functions: <em>one</em> upcall stub for the whole JVM (in the global arena, so it can
 * never be freed while the driver may still call it), and a {@code long} key in {@code userData} that maps to a
 * {@link Slot} in a concurrent map. When the driver runs the host function, the slot is removed and fired;
 * cancelling a registration removes its key, so the host function (which still runs later: a launched host
 * function cannot be withdrawn) finds nothing and returns. Whoever removes the key — the host function or the
 * canceller — owns the completion, so each slot fires or is cancelled exactly once.
 *
 * <p>Host functions run on a driver-owned thread, must not call CUDA ({@code CUDA_ERROR_NOT_PERMITTED} at
 * best, a deadlock at worst) and are <em>not called at all</em> once the context has a sticky error (see
 * {@code cuLaunchHostFunc}). The upcall therefore only hands over: slots set flags, unpark threads or call a
 * {@link io.gpusync.spi.SignalListener}; nothing here takes a lock that is held across a CUDA call. Native
 * release work that a slot would trigger is moved off the driver thread (see
 * {@link CudaDriver#offDriverThread}). An exception escaping an upcall would crash the JVM, so every throwable
 * is caught and logged.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
final class HostFunctions {
    private static final System.Logger LOG = System.getLogger(HostFunctions.class.getName());
    private static final ConcurrentHashMap<Long, Slot> SLOTS = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_KEY = new AtomicLong(1);
    private static final ThreadLocal<Boolean> IN_HOST_FUNCTION = new ThreadLocal<>();

    private HostFunctions() {
    }

    /** What a host function completes. {@link #fire()} runs on a driver thread and only hands over. */
    interface Slot {
        void fire();
    }

    /** Registers {@code slot} under a fresh key (never 0). */
    static long register(Slot slot) {
        long key = NEXT_KEY.getAndIncrement();
        SLOTS.put(key, slot);
        return key;
    }

    /** Removes {@code key}; {@code true} if this call removed it (the slot then never fires). */
    static boolean cancel(long key) {
        return SLOTS.remove(key) != null;
    }

    /** Registered slots whose host function has neither run nor been cancelled (for tests and leak checks). */
    static int pending() {
        return SLOTS.size();
    }

    /** Whether the calling thread is inside one of gpusync's host functions (a driver thread). */
    static boolean onDriverThread() {
        return IN_HOST_FUNCTION.get() != null;
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
     * Arms {@code key} to fire once the work currently captured by {@code event} has completed, without
     * touching the stream that recorded it: pushes {@code context}, creates a private non-blocking stream, makes
     * it wait for the event ({@code cuStreamWaitEvent}), launches the host function on it and destroys the
     * stream at once ({@code cuStreamDestroy} releases it when its pending work is done). The user's streams
     * never carry our host function, so they never stall for a driver-thread round trip.
     *
     * @throws io.gpusync.SyncException (classified by {@link CudaResults}) if a call fails; the key is then
     *                                  still registered (the caller cancels it)
     */
    static void armAfterEvent(MemorySegment context, MemorySegment event, long key) {
        try (CudaDriver.Pushed ignored = CudaDriver.Pushed.push(context, "arming a host function");
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

    /** The upcall: never throws. */
    private static void fire(MemorySegment userData) {
        try {
            IN_HOST_FUNCTION.set(Boolean.TRUE);
            Slot slot = SLOTS.remove(userData.address());
            if (slot != null) {
                slot.fire();
            }
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.ERROR, "a gpusync CUDA host function failed", t);
            } catch (Throwable ignored) {
                // nothing may escape an upcall
            }
        } finally {
            IN_HOST_FUNCTION.remove();
        }
    }

    /** The one upcall stub, created on first use (only after the driver is loaded). */
    private static final class Stub {
        static final MemorySegment STUB = CUhostFn.allocate(HostFunctions::fire, Arena.global());
    }
}
