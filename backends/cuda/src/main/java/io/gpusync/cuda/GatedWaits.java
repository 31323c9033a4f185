package io.gpusync.cuda;

import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.internal.Housekeeping;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntSupplier;

/**
 * The external-semaphore waits gpusync has enqueued on streams, and the destroys of imported semaphores held back
 * until none of them is pending in the semaphore's context.
 *
 * <p><b>Why.</b> {@code cuDestroyExternalSemaphore} does not return while a wait on an external semaphore is pending
 * on a stream of the context — any semaphore's, not only its own — and it holds the driver's lock meanwhile, so
 * every other CUDA call of the process blocks behind it. When the semaphore that wait needs is signalled only after
 * one of those calls (the application mints its next point, say), nothing moves again. A destroy is therefore
 * never made while gpusync knows of a pending wait in the context: each wait ({@link #enqueued}) records an event
 * after itself, and {@link #destroyWhenClear} queues the destroy for a sweep on the housekeeping thread, which
 * queries those events ({@code cuEventQuery}, non-blocking), drops the passed ones and destroys the queued
 * semaphores of a context once none is pending there. Enqueuing a wait and recording its event ({@link #enqueue})
 * and the sweep's look-and-destroy exclude each other (a read and a write lock), so a wait cannot slip in between
 * the look and the destroy. The sweep reschedules itself (1 → 16 ms) while anything is queued. Waits the
 * application enqueues with its own driver calls are not known here.
 *
 * <p><b>Threading.</b> Thread-safe; {@link #destroyWhenClear} never blocks; {@link #enqueue} waits only while a sweep
 * looks and destroys.
 */
final class GatedWaits {
    private static final System.Logger LOG = System.getLogger(GatedWaits.class.getName());
    private static final long FIRST_DELAY_NANOS = 1_000_000L;
    private static final long MAX_DELAY_NANOS = 16_000_000L;
    /** Passed waits' events are collected by a sweep once this many are tracked, even with no destroy queued. */
    private static final int COLLECT_AT = 256;
    private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();
    private final AtomicInteger pendingCount = new AtomicInteger();
    private final ConcurrentLinkedQueue<Destroy> destroys = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final ReentrantReadWriteLock enqueuing = new ReentrantReadWriteLock();

    private record Pending(MemorySegment event, long context) {
    }

    private record Destroy(MemorySegment semaphore, MemorySegment context, CompletableFuture<Void> done) {
    }

    GatedWaits() {
    }

    /**
     * Enqueues a wait with {@code call} ({@code cuWaitExternalSemaphoresAsync}, with {@code context} pushed) and
     * records an event after it on {@code stream}; returns the call's result. A failed record throws, and the
     * wait then goes untracked.
     */
    int enqueue(MemorySegment context, MemorySegment stream, IntSupplier call) {
        enqueuing.readLock().lock();
        try {
            int r = call.getAsInt();
            if (r == CudaResults.SUCCESS) {
                enqueued(context, stream);
            }
            return r;
        } finally {
            enqueuing.readLock().unlock();
        }
    }

    private void enqueued(MemorySegment context, MemorySegment stream) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            int r = Cuda.cuEventCreate(p, Cuda.CU_EVENT_DISABLE_TIMING());
            if (r != CudaResults.SUCCESS) {
                throw CudaResults.exception(r, "cuEventCreate (after an external-semaphore wait)");
            }
            MemorySegment event = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
            r = Cuda.cuEventRecord(event, stream);
            if (r != CudaResults.SUCCESS) {
                CudaDriver.logRelease(Cuda.cuEventDestroy_v2(event), "cuEventDestroy_v2");
                throw CudaResults.exception(r, "cuEventRecord (after an external-semaphore wait)");
            }
            pending.add(new Pending(event, context.address()));
        }
        if (pendingCount.incrementAndGet() >= COLLECT_AT) {
            schedule();
        }
    }

    /**
     * Destroys {@code semaphore} once no wait gpusync enqueued in {@code context} is pending, then completes
     * {@code done}. Never blocks.
     */
    void destroyWhenClear(MemorySegment semaphore, MemorySegment context, CompletableFuture<Void> done) {
        destroys.add(new Destroy(semaphore, context, done));
        schedule();
    }

    /** Destroys still held back (tests). */
    int heldBack() {
        return destroys.size();
    }

    private void schedule() {
        if (scheduled.compareAndSet(false, true)) {
            Housekeeping.schedule(() -> sweep(FIRST_DELAY_NANOS), FIRST_DELAY_NANOS, TimeUnit.NANOSECONDS);
        }
    }

    private void sweep(long delay) {
        enqueuing.writeLock().lock();
        try {
            List<Long> busy = new ArrayList<>();
            for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
                Pending p = it.next();
                if (passed(p)) {
                    it.remove();
                    pendingCount.decrementAndGet();
                } else if (!busy.contains(p.context())) {
                    busy.add(p.context());
                }
            }
            for (Iterator<Destroy> it = destroys.iterator(); it.hasNext(); ) {
                Destroy d = it.next();
                if (!busy.contains(d.context().address())) {
                    it.remove();
                    destroy(d);
                }
            }
        } finally {
            enqueuing.writeLock().unlock();
        }
        if (destroys.isEmpty() && pendingCount.get() < COLLECT_AT) {
            scheduled.set(false);
            if ((destroys.isEmpty() && pendingCount.get() < COLLECT_AT) || !scheduled.compareAndSet(false, true)) {
                return; // a destroy racing this check scheduled its own sweep, or there is nothing left
            }
            delay = FIRST_DELAY_NANOS / 2;
        }
        long next = Math.min(delay * 2, MAX_DELAY_NANOS);
        Housekeeping.schedule(() -> sweep(next), next, TimeUnit.NANOSECONDS);
    }

    /** Whether the wait behind {@code p}'s event has passed (or can never be waited for again: an error). */
    private boolean passed(Pending p) {
        MemorySegment ctx = MemorySegment.ofAddress(p.context());
        int pushed = Cuda.cuCtxPushCurrent_v2(ctx);
        try {
            int r = Cuda.cuEventQuery(p.event());
            if (r == CudaResults.NOT_READY) {
                return false;
            }
            CudaDriver.logRelease(Cuda.cuEventDestroy_v2(p.event()), "cuEventDestroy_v2 (after an external wait)");
            return true;
        } finally {
            if (pushed == CudaResults.SUCCESS) {
                CudaDriver.popQuietly(ctx);
            }
        }
    }

    private void destroy(Destroy d) {
        int pushed = Cuda.cuCtxPushCurrent_v2(d.context());
        try {
            CudaDriver.logRelease(Cuda.cuDestroyExternalSemaphore(d.semaphore()),
                    "cuDestroyExternalSemaphore(" + CudaDriver.hex(d.semaphore()) + ")");
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.WARNING, "destroying CUexternalSemaphore " + CudaDriver.hex(d.semaphore())
                    + " failed", e);
        } finally {
            if (pushed == CudaResults.SUCCESS) {
                CudaDriver.popQuietly(d.context());
            }
            d.done().complete(null);
        }
    }
}
