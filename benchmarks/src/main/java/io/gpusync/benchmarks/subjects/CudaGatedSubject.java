package io.gpusync.benchmarks.subjects;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.test.cuda.CudaWorkQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * CUDA points made ahead and held back on the GPU by a host-memory gate: each stream owns a
 * {@link CudaWorkQueue} (device 0: primary context, one non-blocking stream) and one word of pinned,
 * device-mapped host memory (the gate, initially 0). Point {@code k} of a stream enqueues
 * {@code cuStreamWaitValue64_v2(stream, gate ≥ k)} and then either {@link CudaWorkQueue#advanceTimeline()}
 * ({@code cuda-timeline}: a host-memory timeline value the stream writes, {@code CudaTimelineWaiter}) or
 * {@link CudaWorkQueue#recordEvent()} ({@code cuda-event}: a {@code CUevent}). {@code signal()} is a volatile
 * store of {@code k} into the gate from the host; the GPU front end sees it, passes the wait, writes the value
 * or completes the event. Both are served by SPIN_THEN_CALLBACK. The latency therefore includes the GPU's
 * polling of host memory and the stream's processing; it is a queue-signalled point, not a host signal.
 *
 * <p>Without 64-bit stream memory operations ({@code CAN_USE_64_BIT_STREAM_MEM_OPS} = 0) the gate is waited
 * on with {@code cuStreamWaitValue32_v2} over its low 32 bits.
 *
 * <p><b>Deep queues.</b> A point keeps 2–3 commands pending on its stream, and one stream's submission queue holds
 * a few hundred gated points before the driver blocks the enqueue. So a stream spreads its points over
 * <em>lanes</em> ({@value #POINTS_PER_LANE} consecutive points per lane, up to {@value #MAX_LANES} lanes, taken in
 * turn): N = 10,000 pending points use 79 streams — run with {@code CUDA_DEVICE_MAX_CONNECTIONS=32}, so that at most
 * three lanes share a hardware queue. Should a submission queue fill all the same, the enqueue blocks on the host — with nobody left to open the gate, since the harness makes
 * all points before signalling any. A watchdog therefore opens the gate fully (releasing every pending point)
 * when an enqueue has been stuck for {@value #STUCK_SECONDS} s, and the blocked {@code next()} then throws,
 * naming how many points were pending: the cell fails with that note instead of hanging the harness.
 *
 * <p><b>No device-synchronizing call while anything is gated.</b> {@code cuMemHostAlloc}/{@code cuMemFreeHost}
 * (and module loads and unloads) wait for the device; the device waits for the gates; a stream's close while
 * another stream still holds gated points would then hang the harness. So each stream takes a gate word carved from one slab
 * allocated at the first probe, and its lanes ({@link CudaWorkQueue}s, all {@value #MAX_LANES} opened at the first
 * probe too, while nothing is gated) from pools, and gives them back at close (gate fully opened, lanes drained,
 * gate reset to 0); nothing is destroyed, so no stream's creation or close calls the driver beyond the gate's
 * stores and the drain.
 *
 * <p>Skipped (with the driver's reason) where {@code CudaWorkQueue.open(0)} throws
 * {@link SyncNotSupportedException}. The probe's queue stays open for the life of the process: it keeps the
 * primary context retained.
 */
public final class CudaGatedSubject implements Subject {
    static final int STUCK_SECONDS = 5;
    /**
     * Consecutive points per lane (stream): a quarter of what one stream's submission queue held before the enqueue
     * blocked (RESULTS.md has the figure), so that lanes sharing a hardware queue (more streams than
     * {@code CUDA_DEVICE_MAX_CONNECTIONS}) stay below it too.
     */
    static final int POINTS_PER_LANE = 128;
    /** Lanes opened at the first probe and shared by the streams alive at a time. */
    static final int MAX_LANES = 128;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final Set<GateStream> LIVE = ConcurrentHashMap.newKeySet();
    private static ScheduledExecutorService watchdog;
    private static CudaWorkQueue anchor;
    private static String unavailable;
    private static boolean probed;
    /** Gate words: one slab of pinned, mapped memory, allocated at the first probe and never freed. */
    private static final int GATE_SLAB_WORDS = 512;
    private static final java.util.concurrent.ConcurrentLinkedQueue<MemorySegment> GATES =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private static final java.util.concurrent.ConcurrentLinkedQueue<CudaWorkQueue> QUEUES =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    private final boolean event;

    private CudaGatedSubject(boolean event) {
        this.event = event;
    }

    /** {@code cuda-timeline}: gate, then a host-timeline value written by the stream. */
    public static CudaGatedSubject timeline() {
        return new CudaGatedSubject(false);
    }

    /** {@code cuda-event}: gate, then a recorded {@code CUevent}. */
    public static CudaGatedSubject event() {
        return new CudaGatedSubject(true);
    }

    @Override
    public String name() {
        return event ? "cuda-event" : "cuda-timeline";
    }

    @Override
    public String description() {
        return (event ? "CUevents recorded (CudaWorkQueue.recordEvent)" : "CudaHostTimeline values written by the stream "
                + "(CudaWorkQueue.advanceTimeline)") + ", each behind cuStreamWaitValue64(host gate word ≥ k) on the "
                + "stream (one stream + gate per Stream); signalled by a host store of k into the gate; the engine "
                + "serves them by SPIN_THEN_CALLBACK";
    }

    @Override
    public String unavailableReason() {
        synchronized (CudaGatedSubject.class) {
            if (!probed) {
                probed = true;
                try {
                    anchor = CudaWorkQueue.open(0);
                    allocateGates(anchor);
                    for (int i = 0; i < MAX_LANES; i++) { // module loads wait for the device: never while gated
                        QUEUES.add(CudaWorkQueue.open(0));
                    }
                } catch (SyncNotSupportedException e) {
                    unavailable = "no CUDA driver or device here: " + e.getMessage();
                } catch (RuntimeException | LinkageError e) {
                    unavailable = "CUDA device 0 could not be opened: " + e;
                }
            }
            return unavailable;
        }
    }

    @Override
    public Stream newStream() {
        String why = unavailableReason();
        if (why != null) {
            throw new SyncNotSupportedException(io.gpusync.BackendKind.CUDA, why);
        }
        return new GateStream(event);
    }

    private static void allocateGates(CudaWorkQueue q) {
        check(Cuda.cuCtxPushCurrent_v2(q.context()), "cuCtxPushCurrent_v2");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pp = a.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuMemHostAlloc(pp, GATE_SLAB_WORDS * 8L, Cuda.CU_MEMHOSTALLOC_DEVICEMAP()
                    | Cuda.CU_MEMHOSTALLOC_PORTABLE()), "cuMemHostAlloc(gate slab, DEVICEMAP | PORTABLE)");
            MemorySegment slab = pp.get(ValueLayout.ADDRESS, 0).reinterpret(GATE_SLAB_WORDS * 8L);
            slab.fill((byte) 0);
            for (int i = 0; i < GATE_SLAB_WORDS; i++) {
                GATES.add(slab.asSlice(i * 8L, 8));
            }
        } finally {
            GateStream.pop();
        }
    }

    private static synchronized void watch(GateStream s) {
        LIVE.add(s);
        if (watchdog == null) {
            watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "cuda-gate-watchdog");
                t.setDaemon(true);
                return t;
            });
            watchdog.scheduleWithFixedDelay(() -> LIVE.forEach(GateStream::checkStuck), 500, 500, TimeUnit.MILLISECONDS);
        }
    }

    private static void check(int r, String what) {
        if (r != 0) {
            String name = "CUresult " + r;
            try (Arena a = Arena.ofConfined()) {
                MemorySegment p = a.allocate(ValueLayout.ADDRESS);
                if (Cuda.cuGetErrorName(r, p) == 0) {
                    name = cString(p.get(ValueLayout.ADDRESS, 0)) + " (" + r + ")";
                }
            }
            throw new IllegalStateException(what + " failed: " + name);
        }
    }

    /**
     * The driver's C string at {@code s}, read byte by byte up to its terminator and never past it (gpusync's
     * CStrings is internal to core). cuGetErrorName's strings are the driver's statics: nothing is freed or kept.
     */
    private static String cString(MemorySegment s) {
        MemorySegment unbounded = s.reinterpret(Long.MAX_VALUE); // bounded by the loop below, never read past the 0
        int n = 0;
        while (unbounded.get(ValueLayout.JAVA_BYTE, n) != 0) {
            n++;
        }
        return new String(unbounded.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), java.nio.charset.StandardCharsets.UTF_8);
    }

    private static final class GateStream implements Stream {
        private final boolean event;
        /** Lane 0, and the context all lanes share. */
        private final CudaWorkQueue queue;
        /** Lanes taken so far (guarded by this); lane i serves points (i·{@value #POINTS_PER_LANE}, …] mod all lanes. */
        private final java.util.List<CudaWorkQueue> lanes = new java.util.ArrayList<>();
        private final MemorySegment gate;
        private final long gateDevice;
        private final boolean wide;
        private final Object signalLock = new Object();
        /** Points made (written under this). */
        private volatile long last;
        /** Gate value stored (guarded by signalLock). */
        private long opened;
        /** When the enqueue in progress began (System.nanoTime), or 0. */
        private volatile long enqueueSince;
        private volatile boolean stuck;
        private boolean closed;

        GateStream(boolean event) {
            this.event = event;
            CudaWorkQueue q = QUEUES.poll();
            this.queue = q != null ? q : CudaWorkQueue.open(0);
            lanes.add(queue);
            MemorySegment g = null;
            try (Arena a = Arena.ofConfined()) {
                push();
                try {
                    MemorySegment attr = a.allocate(ValueLayout.JAVA_INT);
                    check(Cuda.cuDeviceGetAttribute(attr, Cuda.CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS(),
                            queue.device()), "cuDeviceGetAttribute(CAN_USE_64_BIT_STREAM_MEM_OPS)");
                    this.wide = attr.get(ValueLayout.JAVA_INT, 0) != 0;
                    g = GATES.poll();
                    if (g == null) {
                        throw new IllegalStateException("all " + GATE_SLAB_WORDS + " gate words are in use");
                    }
                    LONG.setVolatile(g, 0L, 0L);
                    MemorySegment pd = a.allocate(ValueLayout.JAVA_LONG);
                    check(Cuda.cuMemHostGetDevicePointer_v2(pd, g, 0), "cuMemHostGetDevicePointer_v2(gate)");
                    this.gateDevice = pd.get(ValueLayout.JAVA_LONG, 0);
                    this.gate = g;
                } finally {
                    pop();
                }
            } catch (RuntimeException | Error e) {
                if (g != null) {
                    GATES.add(g);
                }
                QUEUES.add(queue);
                throw e;
            }
            watch(this);
        }

        private void push() {
            check(Cuda.cuCtxPushCurrent_v2(queue.context()), "cuCtxPushCurrent_v2");
        }

        private static void pop() {
            try (Arena a = Arena.ofConfined()) {
                check(Cuda.cuCtxPopCurrent_v2(a.allocate(ValueLayout.ADDRESS)), "cuCtxPopCurrent_v2");
            }
        }

        @Override
        public Point next() {
            long k;
            SyncPoint point;
            synchronized (this) {
                if (closed) {
                    throw new IllegalStateException("stream closed");
                }
                k = ++last;
                CudaWorkQueue lane = lane(k);
                enqueueSince = System.nanoTime();
                try {
                    push();
                    try {
                        int r = wide
                                ? Cuda.cuStreamWaitValue64_v2(lane.stream(), gateDevice, k, Cuda.CU_STREAM_WAIT_VALUE_GEQ())
                                : Cuda.cuStreamWaitValue32_v2(lane.stream(), gateDevice, (int) k, Cuda.CU_STREAM_WAIT_VALUE_GEQ());
                        check(r, wide ? "cuStreamWaitValue64_v2(gate ≥ " + k + ")" : "cuStreamWaitValue32_v2(gate ≥ " + k + ")");
                    } finally {
                        pop();
                    }
                    point = event ? lane.recordEvent() : lane.advanceTimeline();
                } finally {
                    enqueueSince = 0;
                }
                if (stuck) {
                    throw new IllegalStateException("the CUDA driver blocked an enqueue for over " + STUCK_SECONDS
                            + " s with " + (k - 1) + " gated points pending on " + lanes.size() + " streams (a submission queue is full); "
                            + "the gate was opened to release them: use a smaller N for " + (event ? "cuda-event" : "cuda-timeline")
                            + ", or more hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS, default 8)");
                }
            }
            SyncWaiter waiter = point.waiter(); // released by its Cleaner once unreachable
            return new Point() {
                @Override
                public SyncWaiter waiter() {
                    return waiter;
                }

                @Override
                public void signal() {
                    open(k);
                }
            };
        }

        /** The lane of point {@code k}; caller holds this. Lanes are taken from the pool as points spread out. */
        private CudaWorkQueue lane(long k) {
            int i = (int) (((k - 1) / POINTS_PER_LANE) % MAX_LANES);
            while (lanes.size() <= i) {
                CudaWorkQueue q = QUEUES.poll();
                if (q == null) {
                    throw new IllegalStateException("all " + MAX_LANES + " CUDA lanes are in use by other streams");
                }
                lanes.add(q);
            }
            return lanes.get(i);
        }

        /** Stores {@code k} into the gate if it is above what was stored (the gate only rises). Never blocks on the GPU. */
        private void open(long k) {
            synchronized (signalLock) {
                if (k > opened) {
                    opened = k;
                    if (wide) {
                        LONG.setVolatile(gate, 0L, k);
                    } else {
                        INT.setVolatile(gate, 0L, (int) Math.min(k, Integer.MAX_VALUE));
                    }
                }
            }
        }

        void checkStuck() {
            long since = enqueueSince;
            if (since != 0 && System.nanoTime() - since > TimeUnit.SECONDS.toNanos(STUCK_SECONDS) && !stuck) {
                stuck = true;
                open(wide ? Long.MAX_VALUE : Integer.MAX_VALUE);
            }
        }

        @Override
        public void signalAll() {
            open(last); // not under this: next() may be blocked in the driver holding it
        }

        @Override
        public long registrations() {
            return -1;
        }

        @Override
        public void close() {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            LIVE.remove(this);
            open(wide ? Long.MAX_VALUE : Integer.MAX_VALUE); // every gated command passes
            java.util.List<CudaWorkQueue> taken;
            synchronized (this) {
                taken = java.util.List.copyOf(lanes);
            }
            taken.forEach(CudaWorkQueue::synchronize); // nothing reads the gate any more
            LONG.setVolatile(gate, 0L, 0L);
            GATES.add(gate);
            QUEUES.addAll(taken); // lanes are reused: no module unload, stream destroy or context release here
        }
    }
}
