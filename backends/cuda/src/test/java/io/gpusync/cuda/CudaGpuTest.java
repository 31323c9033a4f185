package io.gpusync.cuda;

import static io.gpusync.cuda.CudaTestSupport.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gpusync.CudaEventWaiter;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.kit.ProbeLoop;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * CUDA backend on a real GPU (device 0's primary context unless a test says otherwise). The sticky-error test
 * runs in a child JVM ({@link CudaStickyErrorGpuTest}) so that a poisoned context cannot affect these.
 */
@Tag("gpu")
class CudaGpuTest {
    private static final long MS = 1_000_000L;
    private MemorySegment ctx;
    private MemorySegment stream;

    @BeforeEach
    void setUp() {
        assumeCuda();
        ctx = primaryContext();
        push(ctx);
        stream = stream();
    }

    @AfterEach
    void tearDown() {
        if (ctx != null) {
            check(Cuda.cuStreamSynchronize(stream), "sync");
            check(Cuda.cuStreamDestroy_v2(stream), "cuStreamDestroy");
            assertThat(pop().address()).isEqualTo(ctx.address());
        }
    }

    @Test
    void eventCompletesAfterAKernel() {
        launch("spin_ns", stream, 30 * MS);
        SyncPoint.CudaEvent point = CudaEvents.record(stream, ctx);
        assertThat(point.context().address()).isEqualTo(ctx.address());
        assertThat(point.device()).isZero();
        assertThat(point.waiter().asCudaEventWaiter()).containsSame((CudaEventWaiter) point.waiter());
        assertThat(point.isSignaled()).as("a 30 ms kernel is still running").isFalse();
        long t0 = System.nanoTime();
        point.await(Duration.ofSeconds(10));
        assertThat(System.nanoTime() - t0).isGreaterThan(10 * MS);
        assertThat(point.isSignaled()).isTrue();
        point.waiter().close();
    }

    @Test
    void timeoutProbeAndInterrupt() throws Exception {
        launch("spin_ns", stream, 400 * MS);
        SyncPoint.CudaEvent point = CudaEvents.record(stream, ctx);
        assertThatThrownBy(() -> point.await(Duration.ZERO)).isInstanceOf(SyncTimeoutException.class);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> point.await(Duration.ofMillis(30))).isInstanceOf(SyncTimeoutException.class);
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(30 * MS);
        assertThat(point.isSignaled()).isFalse();
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> point.await(Duration.ofSeconds(5))).isInstanceOf(SyncCancelledException.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        point.await(Duration.ofSeconds(10));
        awaitNoPendingStreamCallbacks(); // every armed wake-up was withdrawn or fired
        point.waiter().close();
        assertThatThrownBy(point::isSignaled).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void onSignalCompletesWithNoThreadWaitingAndCancelWithdraws() throws Exception {
        launch("spin_ns", stream, 30 * MS);
        SyncPoint.CudaEvent point = CudaEvents.record(stream, ctx);
        SignalCallbackWaiter waiter = (SignalCallbackWaiter) point.waiter();
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Thread> on = new AtomicReference<>();
        CallbackRegistration reg = waiter.onSignal(listener(() -> {
            on.set(Thread.currentThread());
            done.countDown();
        }));
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(on.get()).isNotSameAs(Thread.currentThread());
        reg.cancel(); // after completion: a no-op

        launch("spin_ns", stream, 100 * MS);
        SyncPoint.CudaEvent second = CudaEvents.record(stream, ctx);
        AtomicInteger calls = new AtomicInteger();
        CallbackRegistration cancelled = ((SignalCallbackWaiter) second.waiter()).onSignal(listener(calls::incrementAndGet));
        cancelled.cancel();
        second.await(Duration.ofSeconds(10));
        Thread.sleep(50);
        assertThat(calls.get()).as("a cancelled listener is never called").isZero();

        // already signalled: synchronous
        AtomicInteger sync = new AtomicInteger();
        assertThat(((SignalCallbackWaiter) second.waiter()).onSignal(listener(sync::incrementAndGet)))
                .isSameAs(CallbackRegistration.DONE);
        assertThat(sync.get()).isOne();
        point.waiter().close();
        second.waiter().close();
    }

    @Test
    void closeDuringACallbackRegistrationDefersTheDestroyOffTheDriverThread() throws Exception {
        launch("spin_ns", stream, 30 * MS);
        SyncPoint.CudaEvent point = CudaEvents.record(stream, ctx);
        CountDownLatch done = new CountDownLatch(1);
        ((SignalCallbackWaiter) point.waiter()).onSignal(listener(done::countDown));
        point.waiter().close(); // the registration's hold keeps the event; its stream callback drops it
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(50); // the release runs on gpusync-cuda-release: must not crash or deadlock
        assertThat(current().address()).isEqualTo(ctx.address());
    }

    @Test
    void dropDisciplineLeavesTheContextStackAsItWas() throws Exception {
        // 1) a thread with no current context records and releases an event of ctx
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread bare = new Thread(() -> {
            try {
                assertThat(current().address()).isZero();
                SyncPoint.CudaEvent p = CudaEvents.record(MemorySegment.NULL, ctx);
                assertThat(current().address()).as("record pops what it pushed").isZero();
                p.await(Duration.ofSeconds(10));
                p.waiter().close(); // destroy: push ctx, cuEventDestroy_v2, pop
                assertThat(current().address()).as("release pops what it pushed").isZero();
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        bare.start();
        bare.join();
        assertThat(failure.get()).isNull();

        // 2) a thread with its own (other) context current releases an event of ctx
        MemorySegment other = createContext();
        try {
            push(other);
            try {
                SyncPoint.CudaEvent p = CudaEvents.record(stream, ctx);
                assertThat(current().address()).isEqualTo(other.address());
                p.await(Duration.ofSeconds(10));
                p.waiter().close();
                assertThat(current().address()).as("the thread's own context is current again").isEqualTo(other.address());
            } finally {
                assertThat(pop().address()).isEqualTo(other.address());
            }
        } finally {
            check(Cuda.cuCtxDestroy_v2(other), "cuCtxDestroy");
        }

        // 3) a borrowed event is never destroyed
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pe = arena.allocate(ValueLayout.ADDRESS);
            check(Cuda.cuEventCreate(pe, Cuda.CU_EVENT_DISABLE_TIMING()), "cuEventCreate");
            MemorySegment ev = pe.get(ValueLayout.ADDRESS, 0);
            check(Cuda.cuEventRecord(ev, stream), "cuEventRecord");
            SyncPoint.CudaEvent borrowed = CudaEvents.borrow(ev.address(), ctx.address());
            borrowed.await(Duration.ofSeconds(10));
            borrowed.waiter().close();
            assertThat(Cuda.cuEventQuery(ev)).as("still a valid event").isZero();
            check(Cuda.cuEventDestroy_v2(ev), "cuEventDestroy (ours)");
        }
    }

    @Test
    void waitOnForeignStreamOrdersASecondContextByTheDataItReads() {
        MemorySegment x = mappedWord();
        MemorySegment y = mappedWord();
        MemorySegment ctx2 = createContext();
        try {
            launch("spin_then_write", stream, 100 * MS, x.address(), 42L);
            SyncPoint.CudaEvent point = CudaEvents.record(stream, ctx);
            push(ctx2);
            try {
                MemorySegment stream2 = stream();
                point.waiter().asCudaEventWaiter().orElseThrow().waitOnForeignStream(stream2);
                launch("copy_u64", stream2, x.address(), y.address());
                sync(stream2);
                assertThat(y.get(ValueLayout.JAVA_LONG, 0)).as("kernel B in ctx2 ran after kernel A's write").isEqualTo(42L);
                // NULL = the calling thread's default stream (of ctx2)
                point.waiter().asCudaEventWaiter().orElseThrow().waitOnForeignStream(MemorySegment.NULL);
                check(Cuda.cuCtxSynchronize(), "cuCtxSynchronize(ctx2)");
                check(Cuda.cuStreamDestroy_v2(stream2), "cuStreamDestroy");
            } finally {
                pop();
            }
            point.waiter().close();
        } finally {
            check(Cuda.cuCtxDestroy_v2(ctx2), "cuCtxDestroy");
        }
    }

    @Test
    void timedWaitsOnAValueHeldBackByAHostGateTimeOutOnTimeAndCompleteOnceTheGateOpens() {
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            push(ctx); // this runs on a thread of its own: the helpers below use the current context
            try {
                gatedValue();
            } finally {
                pop();
            }
        });
    }

    private void gatedValue() throws Exception {
        {
            MemorySegment gate = mappedWord();
            MemorySegment gateDevice;
            try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
                MemorySegment p = arena.allocate(java.lang.foreign.ValueLayout.JAVA_LONG);
                push(ctx);
                try {
                    check(Cuda.cuMemHostGetDevicePointer_v2(p, gate, 0), "cuMemHostGetDevicePointer");
                } finally {
                    pop();
                }
                gateDevice = MemorySegment.ofAddress(p.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0));
            }
            MemorySegment gated = stream();
            try (CudaHostTimeline timeline = CudaHostTimeline.create(ctx)) {
                push(ctx);
                try {
                    check(Cuda.cuStreamWaitValue64_v2(gated, gateDevice.address(), 1, Cuda.CU_STREAM_WAIT_VALUE_GEQ()),
                            "cuStreamWaitValue64_v2");
                } finally {
                    pop();
                }
                SyncPoint.Cuda held = timeline.advance(gated);
                for (int i = 0; i < 20; i++) { // as a waiter thread slicing its wait would
                    long t0 = System.nanoTime();
                    assertThatThrownBy(() -> held.await(Duration.ofMillis(10))).isInstanceOf(SyncTimeoutException.class);
                    assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(10 * MS);
                }
                gate.set(java.lang.foreign.ValueLayout.JAVA_LONG, 0, 1L); // the host opens the gate
                held.await(Duration.ofSeconds(10));
                sync(gated);
            }
            check(Cuda.cuStreamDestroy_v2(gated), "cuStreamDestroy");
        }
    }

    @Test
    void aLateListenerOnAnEarlierValueIsReportedAtThatValueNotAfterTheWorkQueuedSince() throws Exception {
        try (CudaHostTimeline timeline = CudaHostTimeline.create(ctx)) {
            launch("spin_ns", stream, 30 * MS);
            SyncPoint.Cuda p1 = timeline.advance(stream);
            launch("spin_ns", stream, 600 * MS); // work queued after value 1
            SyncPoint.Cuda p2 = timeline.advance(stream);
            CountDownLatch fired = new CountDownLatch(1);
            boolean[] laterValueReachedFirst = new boolean[1];
            ((SignalCallbackWaiter) p1.waiter()).onSignal(listener(() -> {
                laterValueReachedFirst[0] = timeline.completedValue() >= 2;
                fired.countDown();
            }));
            assertThat(fired.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(laterValueReachedFirst[0]).as("value 1's stream callback waited for value 2's work").isFalse();
            p2.await(Duration.ofSeconds(10));
            awaitNoPendingStreamCallbacks();
        }
    }

    @Test
    void hostTimelineAdvancesAndWaitsByReadingMemory() throws Exception {
        try (CudaHostTimeline timeline = CudaHostTimeline.create(ctx)) {
            assertThat(timeline.at(0).isSignaled()).isTrue();
            launch("spin_ns", stream, 30 * MS);
            SyncPoint.Cuda p1 = timeline.advance(stream);
            assertThat(p1.value()).hasValue(1);
            assertThat(p1.event().address()).isEqualTo(timeline.hostAddress().address());
            assertThat(p1.isSignaled()).isFalse();
            p1.await(Duration.ofSeconds(10)); // beyond the spin budget: an on-demand stream callback wakes it
            assertThat(timeline.completedValue()).isEqualTo(1);

            // with a stream callback per advance, and a listener
            launch("spin_ns", stream, 30 * MS);
            SyncPoint.Cuda p2 = timeline.advanceWithStreamCallback(stream);
            CountDownLatch fired = new CountDownLatch(1);
            ((SignalCallbackWaiter) p2.waiter()).onSignal(listener(fired::countDown));
            assertThat(fired.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(p2.isSignaled()).isTrue();
            assertThat(p2.withValue(1).isSignaled()).as("rebind to an earlier value").isTrue();

            // a listener for a value not advanced yet is covered by the advance that writes it
            CountDownLatch future = new CountDownLatch(1);
            SyncPoint.Cuda p3 = timeline.at(3);
            ((SignalCallbackWaiter) p3.waiter()).onSignal(listener(future::countDown));
            assertThatThrownBy(() -> p3.await(Duration.ofMillis(5))).isInstanceOf(SyncTimeoutException.class);
            launch("spin_ns", stream, 10 * MS);
            timeline.advance(stream);
            assertThat(future.await(10, TimeUnit.SECONDS)).isTrue();

            // values stay monotonic across streams: B's later value cannot land before A's
            MemorySegment streamB = stream();
            launch("spin_ns", stream, 100 * MS);
            SyncPoint.Cuda onA = timeline.advance(stream);
            SyncPoint.Cuda onB = timeline.advance(streamB);
            onB.await(Duration.ofSeconds(10));
            assertThat(onA.isSignaled()).isTrue();
            sync(streamB);
            check(Cuda.cuStreamDestroy_v2(streamB), "cuStreamDestroy");
            awaitNoPendingStreamCallbacks();
        }
    }

    @Test
    void releasingATimelineWithAWriteInFlightDefersTheFree() throws Exception {
        CudaHostTimeline timeline = CudaHostTimeline.create(ctx);
        launch("spin_ns", stream, 100 * MS);
        SyncPoint.Cuda p = timeline.advance(stream);
        p.waiter().close();
        timeline.close();
        assertThat(CudaDriverService.get().reaper().buried()).isEqualTo(1);
        sync(stream);
        long deadline = System.nanoTime() + 5_000 * MS;
        while (CudaDriverService.get().reaper().buried() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(CudaDriverService.get().reaper().buried()).isZero();
    }

    @Test
    void tenThousandInFlightEventsAllComplete() throws Exception {
        int n = 10_000;
        launch("spin_ns", stream, 50 * MS);
        List<SyncPoint.CudaEvent> points = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            if (i % 1000 == 0) {
                launch("spin_ns", stream, MS);
            }
            points.add(CudaEvents.record(stream, ctx));
        }
        // a probing loop (the engine version comes with the reactor adapter)
        long deadline = System.nanoTime() + 30_000 * MS;
        List<SyncPoint.CudaEvent> pending = new ArrayList<>(points);
        while (!pending.isEmpty() && System.nanoTime() < deadline) {
            pending.removeIf(SyncPoint::isSignaled);
            Thread.sleep(1);
        }
        assertThat(pending).isEmpty();
        for (SyncPoint.CudaEvent p : points) {
            ProbeLoop.await(p.waiter(), Duration.ZERO);
            p.waiter().close();
        }

        // and 1,000 callback registrations, each behind a stream callback
        launch("spin_ns", stream, 20 * MS);
        CountDownLatch all = new CountDownLatch(1_000);
        List<SyncPoint.CudaEvent> cbs = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            SyncPoint.CudaEvent p = CudaEvents.record(stream, ctx);
            cbs.add(p);
            ((SignalCallbackWaiter) p.waiter()).onSignal(listener(all::countDown));
        }
        assertThat(all.await(30, TimeUnit.SECONDS)).isTrue();
        cbs.forEach(p -> p.waiter().close());
        awaitNoPendingStreamCallbacks();
    }

    @Test
    void errorNamesComeFromTheDriver() {
        assertThat(CudaResults.name(700)).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS");
        assertThat(CudaResults.name(0)).isEqualTo("CUDA_SUCCESS");
        for (int code : new int[] {0, 1, 2, 201, 400, 600, 700, 710, 714, 715, 716, 719}) {
            assertThat(CudaResults.name(code)).as("driver vs header for %d", code)
                    .isEqualTo(CudaResults.tableName(code).orElseThrow());
        }
        assertThat(Cuda.CUDA_ERROR_LAUNCH_FAILED()).isEqualTo(719);
    }

    /** Covers armed on demand may fire a little after the wait they served returned. */
    static void awaitNoPendingStreamCallbacks() throws InterruptedException {
        long deadline = System.nanoTime() + 5_000 * MS;
        while (CudaDriverService.get().callbacks().pending() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(CudaDriverService.get().callbacks().pending()).isZero();
    }

    static SignalListener listener(Runnable onSignal) {
        return new SignalListener() {
            @Override
            public void signalled() {
                onSignal.run();
            }

            @Override
            public void failed(SyncException error) {
                throw new AssertionError("unexpected failure", error);
            }
        };
    }
}
