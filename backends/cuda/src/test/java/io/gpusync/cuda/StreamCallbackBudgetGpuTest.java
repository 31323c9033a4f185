package io.gpusync.cuda;

import static io.gpusync.cuda.CudaTestSupport.assumeCuda;
import static org.assertj.core.api.Assertions.assertThat;

import io.gpusync.SyncException;
import io.gpusync.SyncPoint;
import io.gpusync.test.cuda.CudaWorkQueue;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The driver holds only so many stream callbacks behind cross-stream event waits (on the H200, the 57th
 * {@code cuLaunchHostFunc} blocked until the device drained, and with it every CUDA call of the process: a wait's
 * start, the timeline's advance, the next {@code cuEventRecord}). Waits past their spin budget beyond that room are
 * deferred, never blocked, and still complete on time.
 */
@Tag("gpu")
class StreamCallbackBudgetGpuTest {
    private static final long MS = 1_000_000L;

    @Test
    void moreWaitsPastTheirSpinThanTheDriverHasRoomForNeverBlockTheCallerAndAllComplete() throws Exception {
        assumeCuda();
        try (CudaWorkQueue q = CudaWorkQueue.open(0)) {
            q.launchSpin(3_000 * MS); // the GPU is busy for 3 s: the old code blocked the 57th arm until it drained
            int n = 300;
            CountDownLatch done = new CountDownLatch(2 * n + 10);
            Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
            List<SyncPoint> points = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                SyncPoint event = q.recordEvent();
                SyncPoint value = q.advanceTimeline();
                points.add(event);
                points.add(value);
                listen(event, done, errors);
                listen(value, done, errors);
            }
            for (int i = 0; i < 10; i++) {
                SyncPoint event = q.recordEvent();
                points.add(event);
                Thread.ofPlatform().daemon().start(() -> {
                    try {
                        event.await(SyncPoint.FOREVER);
                    } catch (Throwable t) {
                        errors.add(t);
                    } finally {
                        done.countDown();
                    }
                });
            }
            long startedMs = (System.nanoTime() - t0) / MS;
            int deferred = budget().deferred();
            int inFlight = budget().inFlight();
            System.out.printf("ROOM started %d waits in %d ms; %d stream callbacks in flight (room %d), %d deferred%n",
                    2 * n + 10, startedMs, inFlight, budget().capacity(), deferred);
            assertThat(startedMs).as("starting the waits while the GPU is busy for 3 s, ms").isLessThan(1_500);
            assertThat(inFlight).isLessThanOrEqualTo(budget().capacity());
            assertThat(deferred).as("arms deferred for want of room").isPositive();

            assertThat(done.await(20, TimeUnit.SECONDS)).as("every wait completes once the kernel ends").isTrue();
            assertThat(errors).isEmpty();
            long until = System.nanoTime() + 2_000 * MS;
            while (budget().inFlight() + budget().deferred() > 0 && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            assertThat(budget().inFlight()).as("room given back").isZero();
            assertThat(budget().deferred()).isZero();
            points.forEach(p -> p.waiter().close());
        }
    }

    @Test
    void aDeferredWaitCompletesWhenItsWorkIsDoneEvenIfTheRoomAndTheQueueAreTakenByWaitsBehindALongerKernel() throws Exception {
        assumeCuda();
        try (CudaWorkQueue slow = CudaWorkQueue.open(0); CudaWorkQueue fast = CudaWorkQueue.open(0)) {
            slow.launchSpin(5_000 * MS);
            // the room and the head of the deferred queue (300 entries: more than one probe pass of the first design)
            CountDownLatch slowDone = new CountDownLatch(budget().capacity() + 300);
            Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
            List<SyncPoint> points = new ArrayList<>();
            for (long i = slowDone.getCount(); i > 0; i--) { // every bit of room taken by waits behind 5 s
                // events of the user's own recording (CudaEvents.record): each takes a callback of its own, where the
                // queue's events (recordEvent) would share one per stream (StreamOrder)
                SyncPoint p = CudaEvents.record(slow.stream(), slow.context());
                points.add(p);
                listen(p, slowDone, errors);
            }
            fast.launchSpin(20 * MS);
            SyncPoint quick = fast.recordEvent();
            points.add(quick);
            CountDownLatch quickDone = new CountDownLatch(1);
            long t0 = System.nanoTime();
            listen(quick, quickDone, errors);
            assertThat(budget().deferred()).as("the quick wait had to be deferred").isPositive();
            assertThat(quickDone.await(2, TimeUnit.SECONDS))
                    .as("a deferred wait on a 20 ms kernel is not held up by 5 s kernels of another stream").isTrue();
            System.out.printf("ROOM deferred wait behind a 20 ms kernel completed after %d ms%n",
                    (System.nanoTime() - t0) / MS);
            assertThat(slowDone.await(20, TimeUnit.SECONDS)).isTrue();
            assertThat(errors).isEmpty();
            points.forEach(p -> p.waiter().close());
        }
    }

    private static void listen(SyncPoint point, CountDownLatch done, Queue<Throwable> errors) {
        ((SignalCallbackWaiter) point.waiter()).onSignal(new SignalListener() {
            @Override
            public void signalled() {
                done.countDown();
            }

            @Override
            public void failed(SyncException error) {
                errors.add(error);
                done.countDown();
            }
        });
    }

    /** The process's budget, the one the waits of this test go through. */
    private static StreamCallbackBudget budget() {
        return CudaDriverService.get().budget();
    }
}
