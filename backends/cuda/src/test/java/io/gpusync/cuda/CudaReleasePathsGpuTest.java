package io.gpusync.cuda;

import static io.gpusync.cuda.CudaTestSupport.assumeCuda;
import static io.gpusync.cuda.CudaTestSupport.check;
import static io.gpusync.cuda.CudaTestSupport.launch;
import static io.gpusync.cuda.CudaTestSupport.mappedWord;
import static io.gpusync.cuda.CudaTestSupport.pop;
import static io.gpusync.cuda.CudaTestSupport.primaryContext;
import static io.gpusync.cuda.CudaTestSupport.push;
import static io.gpusync.cuda.CudaTestSupport.stream;
import static io.gpusync.cuda.CudaTestSupport.sync;
import static org.assertj.core.api.Assertions.assertThat;

import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Release paths never synchronize with the device. The measured hang: a stream blocked behind a host gate
 * ({@code cuStreamWaitValue64}) while a timeline was released — {@code cuMemFreeHost} waited for the device, the
 * device for the gate, and every other CUDA call of the process for {@code cuMemFreeHost}.
 */
@Tag("gpu")
class CudaReleasePathsGpuTest {
    private static final long MS = 1_000_000L;

    @Test
    void releasingTimelinesAndEventsWhileAStreamIsBlockedBehindAHostGateTakesAtMostAMillisecond() throws Exception {
        assumeCuda();
        MemorySegment ctx = primaryContext();
        push(ctx);
        MemorySegment gate = mappedWord();
        MemorySegment free = stream();
        warmUpReleasePaths(ctx, free); // the measured release below is a warm one, as in a server
        CudaTestSupport.GatedStream gatedStream = new CudaTestSupport.GatedStream(ctx, gate);
        MemorySegment gated = gatedStream.stream;
        try {
            // a timeline whose value has landed (the old code freed its word with cuMemFreeHost: a hang here) ...
            CudaHostTimeline landed = CudaHostTimeline.create(ctx);
            SyncPoint.Cuda done = landed.advance(free);
            done.await(Duration.ofSeconds(10));
            // ... one whose write sits behind the gate, an event behind the gate with a stream callback armed on it
            CudaHostTimeline held = CudaHostTimeline.create(ctx);
            SyncPoint.Cuda behindGate = held.advance(gated);
            SyncPoint.CudaEvent event = CudaEvents.record(gated, ctx);
            CallbackRegistration registration = ((SignalCallbackWaiter) event.waiter()).onSignal(new SignalListener() {
                @Override
                public void signalled() {
                }

                @Override
                public void failed(io.gpusync.SyncException error) {
                }
            });
            PinnedWordPool pool = CudaDriverService.get().pinnedPool(held.device());
            int freeBefore = pool.freeWords();

            CompletableFuture<Long> releaseNanos = CompletableFuture.supplyAsync(() -> {
                long t0 = System.nanoTime();
                done.waiter().close();
                landed.close();
                long t1 = System.nanoTime();
                registration.cancel();
                event.waiter().close();
                long t2 = System.nanoTime();
                behindGate.waiter().close();
                held.close();
                long t3 = System.nanoTime();
                System.out.printf("RELEASE_STEPS landed timeline %.1f us, event %.1f us, gated timeline %.1f us%n",
                        (t1 - t0) / 1e3, (t2 - t1) / 1e3, (t3 - t2) / 1e3);
                return t3 - t0;
            });
            long nanos;
            try {
                nanos = releaseNanos.get(10, TimeUnit.SECONDS);
            } finally {
                gate.set(ValueLayout.JAVA_LONG, 0, 1L); // open the gate whatever happened, so the JVM recovers
            }
            System.out.printf("RELEASE_BEHIND_GATE %.1f us%n", nanos / 1e3);
            assertThat(nanos).as("release behind a host gate, ns").isLessThanOrEqualTo(1 * MS);
            assertThat(pool.freeWords()).as("the landed word went straight back to the pool (words of earlier tests may return meanwhile)")
                    .isGreaterThanOrEqualTo(freeBefore + 1);
            // the last claim may drop on the housekeeping thread (NativeAnchor moves releases off driver threads),
            // so the release itself can land a little after close() returned
            long buryDeadline = System.nanoTime() + 5_000 * MS;
            while (CudaDriverService.get().reaper().buried() == 0 && System.nanoTime() < buryDeadline) {
                Thread.sleep(1);
            }
            assertThat(CudaDriverService.get().reaper().buried()).as("the gated word waits for its write (free words %d -> %d, gate %d)",
                    freeBefore, pool.freeWords(), gate.get(ValueLayout.JAVA_LONG, 0)).isEqualTo(1);

            sync(gated); // the gate opened: the stream drains
            long deadline = System.nanoTime() + 5_000 * MS;
            while (CudaDriverService.get().reaper().buried() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(2);
            }
            assertThat(CudaDriverService.get().reaper().buried()).isZero();
            assertThat(pool.freeWords()).isEqualTo(freeBefore + 2);
        } finally {
            gatedStream.close();
            sync(free);
            check(Cuda.cuStreamDestroy_v2(free), "cuStreamDestroy");
            pop();
        }
    }

    @Test
    void slicedAwaitsOnAGatedEventKeepOneStreamCallbackOutstandingAndStillComplete() throws Exception {
        assumeCuda();
        MemorySegment ctx = primaryContext();
        push(ctx);
        CudaTestSupport.GatedStream gatedStream = new CudaTestSupport.GatedStream(ctx, mappedWord());
        MemorySegment gated = gatedStream.stream;
        MemorySegment gate = gatedStream.gate;
        try {
            SyncPoint.CudaEvent event = CudaEvents.record(gated, ctx);
            int before = CudaDriverService.get().callbacks().pending();
            for (int i = 0; i < 300; i++) { // gpu-handle-types' waiter thread: short native waits, over and over
                try {
                    event.await(Duration.ofMillis(1));
                } catch (io.gpusync.SyncTimeoutException expected) {
                    // the gate is closed
                }
            }
            assertThat(CudaDriverService.get().callbacks().pending() - before).as("stream callbacks outstanding for one gated event")
                    .isLessThanOrEqualTo(1);
            CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> event.await(Duration.ofSeconds(10)));
            Thread.sleep(20);
            gate.set(ValueLayout.JAVA_LONG, 0, 1L);
            waiting.get(10, TimeUnit.SECONDS);
            event.waiter().close();
        } finally {
            gatedStream.close();
            pop();
        }
    }

    /** One create / advance / record / register / release cycle of every path measured below, not timed. */
    private static void warmUpReleasePaths(MemorySegment ctx, MemorySegment s) throws Exception {
        for (int i = 0; i < 20; i++) {
            launch("spin_ns", s, 1_000_000L);
            CudaHostTimeline t = CudaHostTimeline.create(ctx);
            SyncPoint.Cuda v = t.advance(s);
            SyncPoint.CudaEvent e = CudaEvents.record(s, ctx);
            CallbackRegistration r = ((SignalCallbackWaiter) e.waiter()).onSignal(new SignalListener() {
                @Override
                public void signalled() {
                }

                @Override
                public void failed(io.gpusync.SyncException error) {
                }
            });
            r.cancel();
            e.waiter().close();
            v.waiter().close();
            t.close(); // a write in flight: the reaper takes the word
            sync(s);
        }
        long deadline = System.nanoTime() + 5_000 * MS;
        while (CudaDriverService.get().reaper().buried() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(2); // the reaper has returned every warm-up word before the measured part counts words
        }
    }

    @Test
    void timelineWordsAreCarvedFromSlabsAndRecycledWithoutNewAllocations() throws Exception {
        assumeCuda();
        MemorySegment ctx = primaryContext();
        push(ctx);
        MemorySegment s = stream();
        try {
            CudaHostTimeline first = CudaHostTimeline.create(ctx);
            PinnedWordPool pool = CudaDriverService.get().pinnedPool(first.device());
            first.close();
            int slabs = pool.slabs();
            for (int i = 0; i < 3 * PinnedWordPool.WORDS_PER_SLAB; i++) {
                try (CudaHostTimeline t = CudaHostTimeline.create(ctx)) {
                    assertThat(t.completedValue()).as("a recycled word starts at 0").isZero();
                    if (i % 100 == 0) {
                        launch("spin_ns", s, 1_000L);
                        t.advance(s).await(Duration.ofSeconds(10));
                    }
                }
            }
            assertThat(pool.slabs()).as("1,536 timelines created and released one after another").isEqualTo(slabs);
        } finally {
            sync(s);
            check(Cuda.cuStreamDestroy_v2(s), "cuStreamDestroy");
            pop();
        }
    }
}
