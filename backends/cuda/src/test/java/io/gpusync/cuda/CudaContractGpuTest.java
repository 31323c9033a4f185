package io.gpusync.cuda;

import static io.gpusync.cuda.CudaTestSupport.check;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.testsuite.SyncWaiterContract;
import io.gpusync.bindings.cuda.Cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;

/**
 * The backend contract on a real GPU: a CUDA event and a host-timeline value, each held back on its own stream by
 * a host gate ({@code cuStreamWaitValue64(gate ≥ 1)}) until the subject signals (a host store into the gate). The
 * gates come from one pinned slab allocated before any stream is gated: a {@code cuMemHostAlloc} while a stream
 * waits on a gate would wait for the device, which waits for the gate.
 */
@Tag("gpu")
class CudaContractGpuTest {
    private static final ConcurrentLinkedQueue<MemorySegment> GATES = new ConcurrentLinkedQueue<>();
    private static MemorySegment ctx;

    @BeforeAll
    static void gates() {
        CudaTestSupport.assumeCuda();
        ctx = CudaTestSupport.primaryContext();
        CudaTestSupport.push(ctx);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pp = arena.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuMemHostAlloc(pp, 4096, Cuda.CU_MEMHOSTALLOC_DEVICEMAP() | Cuda.CU_MEMHOSTALLOC_PORTABLE()),
                    "cuMemHostAlloc(gates)");
            MemorySegment slab = pp.get(ValueLayout.ADDRESS, 0).reinterpret(4096);
            slab.fill((byte) 0);
            for (int i = 0; i < 512; i++) {
                GATES.add(slab.asSlice(i * 8L, 8));
            }
        } finally {
            CudaTestSupport.pop();
        }
    }

    private static CudaTestSupport.GatedStream gated() {
        return new CudaTestSupport.GatedStream(ctx, GATES.remove());
    }

    private static void recycle(CudaTestSupport.GatedStream s) {
        s.close();
        GATES.add(s.gate);
    }

    @Nested
    class Event extends SyncWaiterContract {
        @Override
        protected Subject newSubject() {
            CudaTestSupport.GatedStream s = gated();
            SyncPoint.CudaEvent event = CudaEvents.record(s.stream, ctx);
            return new OnceSubject() {
                @Override
                public SyncWaiter waiter() {
                    return event.waiter();
                }

                @Override
                protected void doSignal() {
                    s.open();
                }

                @Override
                public boolean released() {
                    return ((CudaEventSyncWaiter) event.waiter()).released();
                }

                @Override
                public void close() {
                    recycle(s);
                    event.waiter().close();
                }
            };
        }
    }

    @Nested
    class TimelineValue extends SyncWaiterContract {
        @Override
        protected Subject newSubject() {
            CudaTestSupport.GatedStream s = gated();
            CudaHostTimeline timeline = CudaHostTimeline.create(ctx);
            SyncPoint.Cuda value = timeline.advance(s.stream);
            return new OnceSubject() {
                @Override
                public SyncWaiter waiter() {
                    return value.waiter();
                }

                @Override
                protected void doSignal() {
                    s.open();
                }

                @Override
                public void dropProducerHolds() {
                    timeline.close();
                }

                @Override
                public boolean released() {
                    return ((CudaTimelineWaiter) value.waiter()).released();
                }

                @Override
                public void close() {
                    recycle(s);
                    value.waiter().close();
                    timeline.close();
                }
            };
        }
    }
}
