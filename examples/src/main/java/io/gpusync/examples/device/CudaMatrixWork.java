package io.gpusync.examples.device;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.test.cuda.CudaWorkQueue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The CUDA device's real work ({@link MatrixChain}): for each request, its input is written into a pinned host buffer,
 * copied to the device ({@code cuMemcpyHtoDAsync}), multiplied by the {@code matrix_chain} kernel ({@code matrix.ptx},
 * one block), and the result copied back ({@code cuMemcpyDtoHAsync}) — all on the request's stream, before its point.
 *
 * <p>Buffers are allocated once, at {@link #open} ({@code cuMemHostAlloc} and {@code cuMemFreeHost} synchronise with
 * the device, so they never run per request): each stream has {@code slotsPerStream} slots of input and output, host
 * and device. A slot released before its work is done is parked and reused only once a probe of its point says the
 * work is done. {@link #open} also times the work on the GPU (timing events) to pick the number of matrix products that
 * takes the target GPU time, and checks the kernel's checksum against the CPU's: a wrong kernel fails there, at once.
 *
 * <p>Threading: {@link #compute} may be called from any thread (one lock per stream, the queue's own monitor);
 * {@link #awaitEvent} blocks its caller in {@code cuEventSynchronize}. {@link #close()} frees everything once the
 * queues are closed (drained).
 */
final class CudaMatrixWork implements AutoCloseable {
    /** One request's input, then its output (X and the checksum word), rounded up to 256 B so slots stay aligned. */
    static final long SLOT_BYTES = (MatrixChain.INPUT_BYTES + MatrixChain.OUTPUT_BYTES + 255) & ~255L;
    static final long OUTPUT_OFFSET = MatrixChain.INPUT_BYTES;
    private static final int THREADS = 256; // matrix.cu's THREADS
    private static final Duration CALIBRATION_TIMEOUT = Duration.ofSeconds(20);

    private final int device;
    private final MemorySegment context;
    private final MemorySegment module;
    private final MemorySegment function;
    private final Stream[] streams;
    private final int rounds;
    private final String calibration;
    private boolean closed;

    /** One stream's slots: host (pinned) and device memory, free slots and parked ones. */
    private static final class Stream {
        final CudaWorkQueue queue;
        final MemorySegment host;
        final long deviceBase;
        final ArrayDeque<Integer> free = new ArrayDeque<>();
        final ArrayDeque<Parked> parked = new ArrayDeque<>();

        Stream(CudaWorkQueue queue, MemorySegment host, long deviceBase, int slots) {
            this.queue = queue;
            this.host = host;
            this.deviceBase = deviceBase;
            for (int i = 0; i < slots; i++) {
                free.add(i);
            }
        }
    }

    private record Parked(int slot, SyncPoint point) {
    }

    private CudaMatrixWork(List<CudaWorkQueue> queues, int slotsPerStream, Duration target, int fixedRounds) {
        CudaWorkQueue first = queues.get(0);
        this.device = first.device();
        this.context = first.context();
        this.streams = new Stream[queues.size()];
        MemorySegment mod = MemorySegment.NULL;
        MemorySegment fn = MemorySegment.NULL;
        boolean retained = false;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuDevicePrimaryCtxRetain(p, device), "cuDevicePrimaryCtxRetain"); // held until close()
            retained = true;
            push();
            try {
                check(Cuda.cuModuleLoadData(p, a.allocateFrom(ptx())), "cuModuleLoadData(matrix.ptx)");
                mod = p.get(ValueLayout.ADDRESS, 0);
                check(Cuda.cuModuleGetFunction(p, mod, a.allocateFrom("matrix_chain")), "cuModuleGetFunction(matrix_chain)");
                fn = p.get(ValueLayout.ADDRESS, 0);
                MemorySegment dptr = a.allocate(ValueLayout.JAVA_LONG);
                long bytes = SLOT_BYTES * slotsPerStream;
                for (int s = 0; s < streams.length; s++) {
                    check(Cuda.cuMemHostAlloc(p, bytes, 0), "cuMemHostAlloc(" + bytes + " B)");
                    // exactly the bytes cuMemHostAlloc gave; freed only at close, after the queues that use them have drained
                    MemorySegment host = p.get(ValueLayout.ADDRESS, 0).reinterpret(bytes);
                    int r = Cuda.cuMemAlloc_v2(dptr, bytes);
                    if (r != 0) {
                        Cuda.cuMemFreeHost(host);
                        throw error(r, "cuMemAlloc_v2(" + bytes + " B)");
                    }
                    streams[s] = new Stream(queues.get(s), host, dptr.get(ValueLayout.JAVA_LONG, 0), slotsPerStream);
                }
            } finally {
                pop();
            }
            this.module = mod;
            this.function = fn;
            if (fixedRounds > 0) {
                this.rounds = fixedRounds;
                long ns = timedRun(streams[0], fixedRounds);
                this.calibration = fixedRounds + " products per request (--compute-rounds), "
                        + Units.duration(ns) + " of GPU time each (timed once, copies included)";
            } else {
                long t1 = Long.MAX_VALUE;
                long t2 = Long.MAX_VALUE;
                for (int i = 0; i < 9; i++) { // interleaved, the least of each: other work on the GPU only adds time
                    t1 = Math.min(t1, timedRun(streams[0], 2));
                    t2 = Math.min(t2, timedRun(streams[0], 34));
                }
                if (t2 <= t1) {
                    throw new IllegalStateException("timing matrix_chain gave " + Units.duration(t1) + " for 2 products and "
                            + Units.duration(t2) + " for 34: the work cannot be sized from that (use --compute-rounds)");
                }
                double perRound = Math.max(1, (t2 - t1) / 32.0);
                double base = Math.max(0, t1 - 2 * perRound);
                this.rounds = (int) Math.clamp(Math.round((target.toNanos() - base) / perRound), 1, 10_000);
                this.calibration = rounds + " products per request ≈ " + Units.duration(target.toNanos())
                        + " of GPU time (timed: " + Units.duration(Math.round(perRound)) + " per product, "
                        + Units.duration(Math.round(base)) + " for the copies and the launch)";
            }
        } catch (RuntimeException | Error e) {
            if (!(e instanceof GpuStuck)) { // else the stream may still use the buffers, and freeing them would block
                free(mod, retained);
            }
            throw e;
        }
    }

    /**
     * Loads the kernel, allocates {@code slotsPerStream} slots per queue and sizes the work: {@code fixedRounds}
     * products if positive, else as many as take {@code target} of GPU time. Checks the kernel's result against the
     * CPU's on the way, and frees what it took if anything fails.
     *
     * @throws IllegalStateException if the kernel's checksum differs from the CPU's, or the GPU does not finish the
     *                               calibration in time
     */
    static CudaMatrixWork open(List<CudaWorkQueue> queues, int slotsPerStream, Duration target, int fixedRounds) {
        return new CudaMatrixWork(queues, slotsPerStream, target, fixedRounds);
    }

    /** The number of matrix products per request. */
    int rounds() {
        return rounds;
    }

    /** How the work was sized, in words. */
    String calibration() {
        return calibration;
    }

    /**
     * Submits one computation on stream {@code index}: the input expanded from {@code seed} is written into a free
     * slot, then copy in, kernel and copy out are enqueued, then the point ({@code event} true: a recorded event;
     * else {@code kind}'s).
     */
    Computation compute(int index, long seed, boolean event, DeviceOptions.CudaPoint kind) {
        Stream s = streams[index];
        int slot;
        synchronized (s.queue) {
            slot = take(s, index);
        }
        MatrixChain.fill(s.host.asSlice(slot * SLOT_BYTES, MatrixChain.INPUT_BYTES), seed);
        SyncPoint point;
        synchronized (s.queue) { // the point must follow this request's copies and kernel, not another thread's
            try {
                enqueue(s, slot, rounds);
                point = event ? s.queue.recordEvent() : kind.next(s.queue);
            } catch (RuntimeException e) {
                s.free.add(slot);
                throw e;
            }
        }
        return new Job(s, slot, seed, rounds, point);
    }

    /** Blocks in {@code cuEventSynchronize} on {@code event}'s event (no timeout: the driver call has none). */
    void awaitEvent(SyncPoint.CudaEvent event) {
        push();
        try {
            check(Cuda.cuEventSynchronize(event.event()), "cuEventSynchronize");
        } finally {
            pop();
            java.lang.ref.Reference.reachabilityFence(event); // the event lives as long as its point
        }
    }

    /** Frees buffers, the module and the context hold; call after the queues are closed (drained). Idempotent. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            free(module, true);
        }
    }

    private void free(MemorySegment mod, boolean retained) {
        try {
            push();
        } catch (RuntimeException e) {
            return; // the context is gone: so is everything allocated in it
        }
        try {
            for (Stream s : streams) {
                if (s != null) {
                    Cuda.cuMemFreeHost(s.host);
                    Cuda.cuMemFree_v2(s.deviceBase);
                }
            }
            if (!MemorySegment.NULL.equals(mod)) {
                Cuda.cuModuleUnload(mod);
            }
        } finally {
            pop();
            if (retained) {
                Cuda.cuDevicePrimaryCtxRelease_v2(device);
            }
        }
    }

    /** A free slot of {@code s} (its monitor held): the free list, else a parked slot whose work is done. */
    private static int take(Stream s, int index) {
        Integer slot = s.free.poll();
        if (slot != null) {
            return slot;
        }
        for (int i = s.parked.size(); i > 0; i--) {
            Parked p = s.parked.poll();
            boolean done;
            try {
                done = p.point().waiter().isSignaled();
            } catch (RuntimeException failed) {
                continue; // the work failed: the device is in trouble, leave the slot out
            }
            if (done) {
                return p.slot();
            }
            s.parked.add(p);
        }
        throw new SyncBackendException(ErrorKind.RECOVERABLE, BackendKind.CUDA, 0, "NO_FREE_BUFFER",
                "every buffer slot of stream " + index + " holds work in flight (raise --compute-in-flight)");
    }

    /** Enqueues copy in, kernel, copy out of {@code slot} on {@code s}'s stream ({@code s}'s monitor held). */
    private void enqueue(Stream s, int slot, int products) {
        long off = slot * SLOT_BYTES;
        long dIn = s.deviceBase + off;
        long dOut = dIn + OUTPUT_OFFSET;
        MemorySegment stream = s.queue.stream();
        push();
        try (Arena a = Arena.ofConfined()) {
            check(Cuda.cuMemcpyHtoDAsync_v2(dIn, s.host.asSlice(off), MatrixChain.INPUT_BYTES, stream), "cuMemcpyHtoDAsync_v2");
            MemorySegment params = a.allocate(ValueLayout.ADDRESS, 3);
            params.setAtIndex(ValueLayout.ADDRESS, 0, a.allocateFrom(ValueLayout.JAVA_LONG, dIn));
            params.setAtIndex(ValueLayout.ADDRESS, 1, a.allocateFrom(ValueLayout.JAVA_LONG, dOut));
            params.setAtIndex(ValueLayout.ADDRESS, 2, a.allocateFrom(ValueLayout.JAVA_INT, products));
            check(Cuda.cuLaunchKernel(function, 1, 1, 1, THREADS, 1, 1, 0, stream, params, MemorySegment.NULL),
                    "cuLaunchKernel(matrix_chain)");
            check(Cuda.cuMemcpyDtoHAsync_v2(s.host.asSlice(off + OUTPUT_OFFSET), dOut, MatrixChain.OUTPUT_BYTES, stream),
                    "cuMemcpyDtoHAsync_v2");
        } finally {
            pop();
        }
    }

    /**
     * GPU time of one request's work with {@code products} products (slot 0 of {@code s}, timing events around it),
     * its checksum checked against the CPU's. Polls, with a deadline: a GPU that never finishes fails here.
     */
    private long timedRun(Stream s, int products) {
        long seed = 0x5EED + products;
        MatrixChain.fill(s.host.asSlice(0, MatrixChain.INPUT_BYTES), seed);
        s.host.set(ValueLayout.JAVA_INT, OUTPUT_OFFSET + MatrixChain.ENTRIES * 4L, ~MatrixChain.checksum(seed, products));
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            MemorySegment start;
            MemorySegment end;
            push();
            try {
                check(Cuda.cuEventCreate(p, 0), "cuEventCreate");
                start = p.get(ValueLayout.ADDRESS, 0);
                check(Cuda.cuEventCreate(p, 0), "cuEventCreate");
                end = p.get(ValueLayout.ADDRESS, 0);
            } finally {
                pop();
            }
            try {
                synchronized (s.queue) {
                    push();
                    try {
                        check(Cuda.cuEventRecord(start, s.queue.stream()), "cuEventRecord");
                        enqueue(s, 0, products);
                        check(Cuda.cuEventRecord(end, s.queue.stream()), "cuEventRecord");
                    } finally {
                        pop();
                    }
                }
                long deadline = System.nanoTime() + CALIBRATION_TIMEOUT.toNanos();
                int r;
                while ((r = Cuda.cuEventQuery(end)) == Cuda.CUDA_ERROR_NOT_READY()) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new GpuStuck("the GPU did not finish one matrix_chain request ("
                                + products + " products) within " + CALIBRATION_TIMEOUT.toSeconds() + " s");
                    }
                    Thread.onSpinWait();
                }
                check(r, "cuEventQuery");
                MemorySegment ms = a.allocate(ValueLayout.JAVA_FLOAT);
                check(Cuda.cuEventElapsedTime_v2(ms, start, end), "cuEventElapsedTime_v2");
                int got = s.host.get(ValueLayout.JAVA_INT, OUTPUT_OFFSET + MatrixChain.ENTRIES * 4L);
                int want = MatrixChain.checksum(seed, products);
                if (got != want) {
                    throw new IllegalStateException("matrix_chain's checksum (" + Integer.toHexString(got)
                            + ") differs from the CPU's (" + Integer.toHexString(want) + ") for " + products
                            + " products: the kernel, its launch or the copies are wrong");
                }
                return Math.round(ms.get(ValueLayout.JAVA_FLOAT, 0) * 1e6);
            } finally {
                push();
                Cuda.cuEventDestroy_v2(start);
                Cuda.cuEventDestroy_v2(end);
                pop();
            }
        }
    }

    /** The GPU did not finish the calibration's work in time: its buffers are left allocated (still in use). */
    private static final class GpuStuck extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        GpuStuck(String message) {
            super(message);
        }
    }

    /** One request's slot and point. */
    private static final class Job implements Computation {
        private final Stream stream;
        private final int slot;
        private final long seed;
        private final int rounds;
        private final SyncPoint point;
        private boolean released;

        Job(Stream stream, int slot, long seed, int rounds, SyncPoint point) {
            this.stream = stream;
            this.slot = slot;
            this.seed = seed;
            this.rounds = rounds;
            this.point = point;
        }

        @Override
        public long seed() {
            return seed;
        }

        @Override
        public int rounds() {
            return rounds;
        }

        @Override
        public SyncPoint point() {
            return point;
        }

        @Override
        public int checksum() {
            return stream.host.get(ValueLayout.JAVA_INT, slot * SLOT_BYTES + OUTPUT_OFFSET + MatrixChain.ENTRIES * 4L);
        }

        @Override
        public void release(boolean waitFinished) {
            synchronized (stream.queue) {
                if (released) {
                    return;
                }
                released = true;
                if (waitFinished) {
                    stream.free.add(slot);
                } else {
                    stream.parked.add(new Parked(slot, point));
                }
            }
        }
    }

    private static void check(int r, String what) {
        if (r != 0) {
            throw error(r, what);
        }
    }

    static SyncBackendException error(int r, String what) {
        String name = "CUDA error " + r;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            if (Cuda.cuGetErrorName(r, p) == 0) {
                name = io.gpusync.internal.CStrings.read(p.get(ValueLayout.ADDRESS, 0)); // a static string of the driver
            }
        }
        return new SyncBackendException(ErrorKind.FATAL, BackendKind.CUDA, r, name, what);
    }

    private void push() {
        check(Cuda.cuCtxPushCurrent_v2(context), "cuCtxPushCurrent_v2");
    }

    private static void pop() {
        try (Arena a = Arena.ofConfined()) {
            Cuda.cuCtxPopCurrent_v2(a.allocate(ValueLayout.ADDRESS));
        }
    }

    private static String ptx() {
        try (InputStream in = CudaMatrixWork.class.getResourceAsStream("matrix.ptx")) {
            if (in == null) {
                throw new SyncNotSupportedException(BackendKind.CUDA, "matrix.ptx missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new SyncNotSupportedException(BackendKind.CUDA, "cannot read matrix.ptx", e);
        }
    }
}
