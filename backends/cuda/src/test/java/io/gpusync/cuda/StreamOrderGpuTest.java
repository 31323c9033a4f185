package io.gpusync.cuda;

import static io.gpusync.cuda.CudaTestSupport.assumeCuda;
import static io.gpusync.cuda.CudaTestSupport.check;
import static org.assertj.core.api.Assertions.assertThat;

import io.gpusync.SyncException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.test.cuda.CudaWorkQueue;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Events recorded by an owned stream are served by the stream's order ({@link StreamOrder}) on a real GPU: a burst
 * on several streams completes in full, each stream holds one stream callback however many of its events are
 * waited on, a sweep never completes an event its stream has not reached, and waits cancelled mid-burst are freed.
 * Each event is held back by a host gate ({@code cuStreamWaitValue64(gate ≥ k)} before the k-th record), so the
 * test decides how far each stream has run.
 */
@Tag("gpu")
class StreamOrderGpuTest {
    private static final long MS = 1_000_000L;

    /** A queue whose k-th event is recorded behind {@code gate ≥ k}. */
    private static final class Gated implements AutoCloseable {
        final CudaWorkQueue queue = CudaWorkQueue.open(0);
        final MemorySegment gate;
        final long gateDevice;
        final List<SyncPoint.CudaEvent> events = new ArrayList<>();

        Gated(MemorySegment gate) {
            this.gate = gate;
            try (Arena a = Arena.ofConfined()) {
                CudaTestSupport.push(queue.context());
                try {
                    MemorySegment p = a.allocate(ValueLayout.JAVA_LONG);
                    check(Cuda.cuMemHostGetDevicePointer_v2(p, gate, 0), "cuMemHostGetDevicePointer_v2(gate)");
                    gateDevice = p.get(ValueLayout.JAVA_LONG, 0);
                } finally {
                    CudaTestSupport.pop();
                }
            }
        }

        /** Records {@code n} events, the k-th behind {@code gate ≥ k}. */
        void record(int n) {
            for (int k = events.size() + 1, end = events.size() + n; k <= end; k++) {
                CudaTestSupport.push(queue.context());
                try {
                    check(Cuda.cuStreamWaitValue64_v2(queue.stream(), gateDevice, k, Cuda.CU_STREAM_WAIT_VALUE_GEQ()),
                            "cuStreamWaitValue64_v2(gate ≥ " + k + ")");
                } finally {
                    CudaTestSupport.pop();
                }
                events.add(queue.recordEvent());
            }
        }

        /** Lets the stream run up to its {@code k}-th event (a host store). */
        void open(long k) {
            gate.set(ValueLayout.JAVA_LONG, 0, k);
        }

        @Override
        public void close() {
            open(Long.MAX_VALUE);
            events.forEach(e -> e.waiter().close());
            queue.close();
        }
    }

    /** Gate words, allocated before any stream is gated ({@code cuMemHostAlloc} waits for the device). */
    private static List<MemorySegment> gates(int n) {
        try (CudaWorkQueue q = CudaWorkQueue.open(0)) {
            CudaTestSupport.push(q.context());
            try {
                List<MemorySegment> gs = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    gs.add(CudaTestSupport.mappedWord());
                }
                return gs;
            } finally {
                CudaTestSupport.pop();
            }
        }
    }

    private static final class Listener implements SignalListener {
        final CountDownLatch done;
        final Queue<Throwable> errors;
        final AtomicBoolean signalled = new AtomicBoolean();

        Listener(CountDownLatch done, Queue<Throwable> errors) {
            this.done = done;
            this.errors = errors;
        }

        @Override
        public void signalled() {
            if (!signalled.compareAndSet(false, true)) {
                errors.add(new AssertionError("signalled twice"));
            }
            done.countDown();
        }

        @Override
        public void failed(SyncException error) {
            errors.add(error);
            done.countDown();
        }
    }

    private static CallbackRegistration listen(SyncPoint p, SignalListener l) {
        return ((SignalCallbackWaiter) p.waiter()).onSignal(l);
    }

    @Test
    void aBurstOfAThousandEventsOnFourStreamsCompletesInFullWithOneStreamCallbackPerStream() throws Exception {
        assumeCuda();
        List<MemorySegment> gates = gates(4);
        List<Gated> streams = new ArrayList<>();
        try {
            // every queue is opened before any stream is held at its gate: loading a queue's kernels module
            // (cuModuleLoadData) while another stream of the context waits on a host gate spins in the driver for good
            for (MemorySegment g : gates) {
                streams.add(new Gated(g));
            }
            for (Gated s : streams) {
                s.record(250);
            }
            CountDownLatch done = new CountDownLatch(1_000);
            Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
            for (Gated s : streams) {
                s.events.forEach(e -> listen(e, new Listener(done, errors)));
            }
            int inFlight = CudaDriverService.get().budget().inFlight();
            assertThat(inFlight).as("stream callbacks for 1,000 waits on 4 streams").isLessThanOrEqualTo(4);

            long t0 = System.nanoTime();
            streams.forEach(s -> s.open(250));
            assertThat(done.await(20, TimeUnit.SECONDS)).as("every event of the burst completed").isTrue();
            double seconds = (System.nanoTime() - t0) / 1e9;
            System.out.printf("BURST 1,000 events on 4 streams: %.0f completions/s%n", 1_000 / seconds);
            assertThat(errors).isEmpty();
            for (Gated s : streams) {
                assertThat(s.queue.owner().pendingInOrder(s.queue.stream())).isZero();
            }
        } finally {
            streams.forEach(Gated::close);
        }
    }

    @Test
    void aSweepNeverCompletesAnEventItsStreamHasNotReached() throws Exception {
        assumeCuda();
        try (Gated s = new Gated(gates(1).getFirst())) {
            s.record(100);
            CountDownLatch first40 = new CountDownLatch(40);
            CountDownLatch all = new CountDownLatch(100);
            Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
            List<Listener> listeners = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                Listener l = new Listener(i < 40 ? first40 : new CountDownLatch(1), errors);
                listeners.add(l);
                listen(s.events.get(i), new SignalListener() { // may run on a driver thread: no CUDA call here
                    @Override
                    public void signalled() {
                        l.signalled();
                        all.countDown();
                    }

                    @Override
                    public void failed(SyncException error) {
                        l.failed(error);
                        all.countDown();
                    }
                });
            }

            s.open(40);
            assertThat(first40.await(10, TimeUnit.SECONDS)).as("the 40 events the stream ran").isTrue();
            Thread.sleep(300); // sweeps and the armer's probes have had every chance to over-complete
            for (int i = 40; i < 100; i++) {
                assertThat(listeners.get(i).signalled).as("event %d, behind the closed gate", i + 1).isFalse();
                assertThat(s.events.get(i).isSignaled()).isFalse();
            }
            assertThat(s.queue.owner().pendingInOrder(s.queue.stream())).isEqualTo(60);

            s.open(100);
            assertThat(all.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(errors).isEmpty();
        }
    }

    @Test
    void waitsCancelledMidBurstAreFreedAndTheRestComplete() throws Exception {
        assumeCuda();
        List<MemorySegment> gates = gates(2);
        try (Gated a = new Gated(gates.get(0)); Gated b = new Gated(gates.get(1))) {
            a.record(500);
            b.record(500);
            CountDownLatch kept = new CountDownLatch(500);
            Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
            List<CallbackRegistration> cancelled = new ArrayList<>();
            List<Listener> cancelledListeners = new ArrayList<>();
            for (Gated s : List.of(a, b)) {
                for (int i = 0; i < 500; i++) {
                    if (i % 2 == 0) {
                        listen(s.events.get(i), new Listener(kept, errors));
                    } else {
                        Listener l = new Listener(new CountDownLatch(1), errors);
                        cancelledListeners.add(l);
                        cancelled.add(listen(s.events.get(i), l));
                    }
                }
            }
            a.open(250);
            b.open(250);
            cancelled.forEach(CallbackRegistration::cancel); // mid-burst: some have completed, some not
            a.open(500);
            b.open(500);
            assertThat(kept.await(20, TimeUnit.SECONDS)).as("the waits not cancelled").isTrue();
            assertThat(errors).isEmpty();
            long until = System.nanoTime() + 5_000 * MS;
            while ((a.queue.owner().pendingInOrder(a.queue.stream()) + b.queue.owner().pendingInOrder(b.queue.stream()) > 0
                    || CudaDriverService.get().budget().inFlight() > 0) && System.nanoTime() < until) {
                Thread.sleep(5);
            }
            assertThat(a.queue.owner().pendingInOrder(a.queue.stream()) + b.queue.owner().pendingInOrder(b.queue.stream())).as("waits left in the orders").isZero();
            assertThat(CudaDriverService.get().budget().inFlight()).as("stream callbacks left").isZero();
            a.events.forEach(e -> e.waiter().close());
            b.events.forEach(e -> e.waiter().close());
            List<CudaEventSyncWaiter> waiters = new ArrayList<>();
            a.events.forEach(e -> waiters.add((CudaEventSyncWaiter) e.waiter()));
            b.events.forEach(e -> waiters.add((CudaEventSyncWaiter) e.waiter()));
            until = System.nanoTime() + 5_000 * MS;
            while (!waiters.stream().allMatch(CudaEventSyncWaiter::released) && System.nanoTime() < until) {
                Thread.sleep(5);
            }
            assertThat(waiters).as("every event released once closed: no hold left behind").allMatch(CudaEventSyncWaiter::released);
        }
    }
}
