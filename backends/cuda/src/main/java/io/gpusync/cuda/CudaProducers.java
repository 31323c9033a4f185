package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.kit.NativeAnchor;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * Producers of CUDA work for gpusync's own tests, the demo and the benchmarks: they make GPU work and signal the
 * primitives that the sync points of this package wait on. They are not part of the synchronisation contract
 * (applications bring their own CUDA work); they live here, in one clearly named holder, because the tests and
 * benchmarks of other modules share them. Not instantiable; each nested class states its own threading, blocking
 * and lifetime rules.
 */
public final class CudaProducers {
    private CudaProducers() {
    }

    /**
     * A small owned CUDA producer for demos, benchmarks and tests: device {@code n}'s primary context, one
     * non-blocking stream, a module with a one-thread "spin for N ns" kernel, and a {@link CudaHostTimeline} on
     * that stream. Submit work with {@link #launchSpin}, then mint the point to await with {@link #recordEvent}
     * (a {@code CUevent}) or {@link #advanceTimeline} (a host-memory timeline value).
     *
     * <p><b>Threading.</b> Submissions are serialised (one stream) and may come from any thread; the context is
     * pushed and popped around each driver call, so the caller's context stack is left as it was. Nothing here
     * blocks except {@link #synchronize()} and {@link #close()}, which wait for the stream to drain.
     */
    public static final class CudaWorkQueue implements AutoCloseable {
        private final int device;
        private final MemorySegment context;
        private final MemorySegment stream;
        private final MemorySegment module;
        private final MemorySegment spinKernel;
        private final CudaHostTimeline timeline;
        private final String deviceName;
        private final ProducerLifetime lifetime;
        /** The events this queue's stream recorded that are waited on, in record order. */
        private final StreamOrder order;
        /** This queue's hold on the primary context; every point it mints holds it too, until released. */
        private final NativeAnchor.Claim contextHold;
        private boolean closed;

        private CudaWorkQueue(int device) {
            CudaDriver.ensure();
            this.device = device;
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
                check(Cuda.cuDevicePrimaryCtxRetain(p, device), "cuDevicePrimaryCtxRetain(" + device + ")");
                this.context = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                this.contextHold = NativeAnchor.adopt("primary context of device " + device + " (CudaWorkQueue)",
                        () -> CudaDriver.logRelease(Cuda.cuDevicePrimaryCtxRelease_v2(device),
                                "cuDevicePrimaryCtxRelease_v2(" + device + ")")).claim(this);
                MemorySegment name = arena.allocate(256);
                check(Cuda.cuDeviceGetName(name, 256, device), "cuDeviceGetName");
                this.deviceName = name.getString(0);
                try (CudaDriver.Pushed pushed = CudaDriver.Pushed.push(context, "CudaWorkQueue")) {
                    check(Cuda.cuStreamCreate(p, Cuda.CU_STREAM_NON_BLOCKING()), "cuStreamCreate");
                    this.stream = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                    check(Cuda.cuModuleLoadData(p, arena.allocateFrom(ptx())), "cuModuleLoadData(kernels.ptx)");
                    this.module = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                    check(Cuda.cuModuleGetFunction(p, module, arena.allocateFrom("spin_ns")), "cuModuleGetFunction(spin_ns)");
                    this.spinKernel = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                }
            }
            this.lifetime = new ProducerLifetime(CudaDriverService.get(), this.toString());
            this.order = new StreamOrder(CudaDriverService.get(), context, lifetime);
            contextHold.enter(); // the timeline's hold, dropped after its events are destroyed
            try {
                this.timeline = CudaHostTimeline.create(context, contextHold::exit);
            } catch (RuntimeException e) {
                contextHold.exit();
                throw e;
            }
        }

        /**
         * Opens device {@code device}.
         *
         * @throws SyncNotSupportedException if there is no CUDA driver or no such device
         */
        public static CudaWorkQueue open(int device) {
            return new CudaWorkQueue(device);
        }

        /** The device's name as the driver reports it ({@code cuDeviceGetName}). */
        public String deviceName() {
            return deviceName;
        }

        /** The device ordinal. */
        public int device() {
            return device;
        }

        /** The primary context (retained by this queue until {@link #close()}). */
        public MemorySegment context() {
            return context;
        }

        /** The queue's stream. */
        public MemorySegment stream() {
            return stream;
        }

        /** The order of this queue's waited-on events (tests). */
        StreamOrder order() {
            return order;
        }

        /** The host-memory timeline advanced by {@link #advanceTimeline()}. */
        public CudaHostTimeline timeline() {
            return timeline;
        }

        /** Enqueues a one-thread kernel that spins for {@code nanos} ns of GPU time ({@code %globaltimer}). */
        public synchronized void launchSpin(long nanos) {
            requireOpen();
            try (Arena arena = Arena.ofConfined();
                 CudaDriver.Pushed pushed = CudaDriver.Pushed.push(context, "launchSpin")) {
                MemorySegment params = arena.allocate(ValueLayout.ADDRESS, 1);
                params.setAtIndex(ValueLayout.ADDRESS, 0, arena.allocateFrom(ValueLayout.JAVA_LONG, nanos));
                check(Cuda.cuLaunchKernel(spinKernel, 1, 1, 1, 1, 1, 1, 0, stream, params, MemorySegment.NULL),
                        "cuLaunchKernel(spin_ns)");
            }
        }

        /** An owned event recorded on the stream now: signalled when everything submitted so far is done. */
        public synchronized SyncPoint.CudaEvent recordEvent() {
            requireOpen();
            contextHold.enter(); // dropped once the event is destroyed
            try {
                return CudaEvents.record(stream, context, lifetime, contextHold::exit, order);
            } catch (RuntimeException e) {
                contextHold.exit();
                throw e;
            }
        }

        /** The next value of the host-memory timeline, written by the stream after everything submitted so far. */
        public synchronized SyncPoint.Cuda advanceTimeline() {
            // timeline values hold the context through the timeline's own anchor (released after its last point)
            requireOpen();
            return timeline.advance(stream);
        }

        /** Blocks until the stream has drained. */
        public void synchronize() {
            try (CudaDriver.Pushed pushed = CudaDriver.Pushed.push(context, "synchronize")) {
                check(Cuda.cuStreamSynchronize(stream), "cuStreamSynchronize");
            }
        }

        /**
         * Closes the queue: every wait still pending on its events or timeline values fails at once with
         * {@link io.gpusync.SyncCancelledException} (engine and blocking waits alike, {@code FOREVER} included); then
         * the stream is drained ({@code cuStreamSynchronize}: this call blocks until the submitted work is done; a
         * sticky context error is logged, not thrown), the module unloaded, the stream destroyed and the queue's hold
         * on the primary context dropped. Points minted by the queue keep their events valid until they are released
         * themselves — the primary context is released only after the last of them — so no handle is used after it
         * is freed. Idempotent.
         */
        @Override
        public void close() {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            lifetime.end();
            timeline.failPending(lifetime.cancelled());
            try {
                synchronize();
            } catch (io.gpusync.SyncException e) {
                System.getLogger(CudaWorkQueue.class.getName()).log(System.Logger.Level.WARNING,
                        "closing " + this + ": the stream did not drain cleanly", e);
            }
            timeline.close();
            try (CudaDriver.Pushed pushed = CudaDriver.Pushed.push(context, "close")) {
                CudaDriver.logRelease(Cuda.cuModuleUnload(module), "cuModuleUnload");
                CudaDriver.logRelease(Cuda.cuStreamDestroy_v2(stream), "cuStreamDestroy_v2");
            } catch (io.gpusync.SyncException e) {
                System.getLogger(CudaWorkQueue.class.getName()).log(System.Logger.Level.WARNING,
                        "closing " + this + ": cannot push the context to unload the module and destroy the stream", e);
            }
            contextHold.close();
        }

        private void requireOpen() {
            if (closed) {
                throw new IllegalStateException("CudaWorkQueue on " + deviceName + " is closed");
            }
        }

        private static void check(int r, String what) {
            if (r != CudaResults.SUCCESS) {
                throw CudaResults.exception(r, what);
            }
        }

        private static String ptx() {
            try (InputStream in = CudaWorkQueue.class.getResourceAsStream("kernels.ptx")) {
                if (in == null) {
                    throw new SyncNotSupportedException(BackendKind.CUDA, "kernels.ptx missing from the classpath");
                }
                return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            } catch (IOException e) {
                throw new SyncNotSupportedException(BackendKind.CUDA, "cannot read kernels.ptx", e);
            }
        }

        @Override
        public String toString() {
            return "CudaWorkQueue[" + deviceName + ", device " + device + "]";
        }
    }
}
