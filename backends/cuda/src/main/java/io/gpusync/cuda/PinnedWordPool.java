package io.gpusync.cuda;

import io.gpusync.bindings.cuda.Cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pinned, device-mapped host words of {@link CudaHostTimeline}s, carved from slabs and recycled, so that no
 * timeline's creation or release calls {@code cuMemHostAlloc}/{@code cuMemFreeHost} — both synchronize with the
 * device: called on a release path while a stream is blocked behind a host gate ({@code cuStreamWaitValue64}),
 * {@code cuMemFreeHost} never returns and every other thread's CUDA call queues behind it; even without a gate it
 * stalls every CUDA call of the process until the device drains.
 *
 * <p><b>Slabs.</b> One pool per device. A slab is {@value #SLAB_BYTES} bytes ({@value #WORDS_PER_SLAB} words) of
 * {@code cuMemHostAlloc(DEVICEMAP | PORTABLE)} allocated in the device's <em>primary</em> context, which the pool
 * retains ({@code cuDevicePrimaryCtxRetain}) and never releases: PORTABLE memory is pinned and, under unified
 * addressing, mapped at the same address for every context of the process, and a slab must outlive any context a
 * user may destroy while words of it are still in use. Slabs are allocated only when the free list is empty (a
 * timeline's creation, one in {@value #WORDS_PER_SLAB}) and are never freed: they are small, and freeing one would
 * be the very device-synchronizing call this class exists to avoid. ({@code cuDevicePrimaryCtxReset} by the
 * application would free them under the pool: do not reset a primary context while gpusync timelines exist.)
 *
 * <p><b>Recycling.</b> A word returns to the pool only once no GPU operation can still write it: its timeline was
 * released and the last value it advanced has landed ({@link TimelineState} checks, {@link PinnedReaper} waits for
 * writes still in flight); a word whose write can never land (its context died) is never recycled. Free words are
 * reused in FIFO order, so a returned word rests behind every other free word before it is handed out again.
 *
 * <p>Thread-safe; {@link #take()} may block in the driver only when it allocates a slab.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
final class PinnedWordPool {
    static final int SLAB_BYTES = 4096;
    static final int WORDS_PER_SLAB = SLAB_BYTES / 8;

    private final int device;
    private final ConcurrentLinkedQueue<MemorySegment> free = new ConcurrentLinkedQueue<>();
    private final AtomicInteger slabs = new AtomicInteger();
    private MemorySegment primaryContext; // guarded by this

    /** The pool of {@code device}; one per device and service ({@link CudaDriverService#pinnedPool}). */
    PinnedWordPool(int device) {
        this.device = device;
    }

    /** A zeroed word (8 bytes, 8-aligned) of pinned, mapped, portable host memory. */
    MemorySegment take() {
        MemorySegment word = free.poll();
        if (word == null) {
            word = allocateSlab();
        }
        word.set(ValueLayout.JAVA_LONG, 0, 0L);
        java.lang.invoke.VarHandle.fullFence();
        return word;
    }

    /** Returns a word that no GPU operation will write any more. Never calls the driver. */
    void give(MemorySegment word) {
        free.add(word);
    }

    /** Slabs allocated so far (tests). */
    int slabs() {
        return slabs.get();
    }

    /** Free words (tests). */
    int freeWords() {
        return free.size();
    }

    private synchronized MemorySegment allocateSlab() {
        MemorySegment again = free.poll(); // another thread may have allocated meanwhile
        if (again != null) {
            return again;
        }
        try (Arena arena = Arena.ofConfined()) {
            if (primaryContext == null) {
                MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
                CudaResults.check(Cuda.cuDevicePrimaryCtxRetain(p, device),
                        "cuDevicePrimaryCtxRetain(" + device + ") for the pinned timeline words");
                primaryContext = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
            }
            MemorySegment slab;
            try (CudaDriver.Pushed ignored = CudaDriver.Pushed.push(primaryContext, "allocating a pinned slab")) {
                MemorySegment pp = arena.allocate(ValueLayout.ADDRESS);
                CudaResults.check(Cuda.cuMemHostAlloc(pp, SLAB_BYTES,
                                Cuda.CU_MEMHOSTALLOC_DEVICEMAP() | Cuda.CU_MEMHOSTALLOC_PORTABLE()),
                        "cuMemHostAlloc(" + SLAB_BYTES + ", DEVICEMAP | PORTABLE)");
                slab = pp.get(ValueLayout.ADDRESS, 0).reinterpret(SLAB_BYTES);
            }
            slab.fill((byte) 0);
            slabs.incrementAndGet();
            for (int i = 1; i < WORDS_PER_SLAB; i++) {
                free.add(slab.asSlice((long) i * 8, 8));
            }
            return slab.asSlice(0, 8);
        }
    }
}
