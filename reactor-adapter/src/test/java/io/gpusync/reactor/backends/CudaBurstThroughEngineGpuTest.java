package io.gpusync.reactor.backends;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.test.cuda.CudaWorkQueue;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPolicy;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A burst of CUDA events through the engine, on a real GPU: 1,000 events recorded on four queues behind one kernel
 * each complete together when the kernels end (the stream orders' sweeps), under both wait policies, and the half
 * cancelled before the end is freed at once and never signalled.
 */
@Tag("gpu")
class CudaBurstThroughEngineGpuTest {
    private static final long MS = 1_000_000L;

    @ParameterizedTest
    @EnumSource(WaitPolicy.class)
    void aThousandEventsOnFourStreamsCompleteTogetherAndTheCancelledHalfIsFreed(WaitPolicy policy) throws Exception {
        List<CudaWorkQueue> queues = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                queues.add(CudaWorkQueue.open(0));
            }
        } catch (SyncNotSupportedException absent) {
            queues.forEach(CudaWorkQueue::close);
            assumeTrue(false, "no CUDA driver or device here: " + absent.getMessage());
        }
        SyncEngine engine = GpuSync.builder().name("burst-" + policy).waitPolicy(policy).build();
        try {
            queues.forEach(q -> q.launchSpin(1_000 * MS)); // every event below completes when its kernel ends
            CountDownLatch kept = new CountDownLatch(500);
            Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
            Queue<SyncPoint> signalledCancelled = new ConcurrentLinkedQueue<>();
            List<Disposable> cancelled = new ArrayList<>();
            List<SyncPoint> points = new ArrayList<>();
            for (CudaWorkQueue q : queues) {
                for (int i = 0; i < 250; i++) {
                    SyncPoint p = q.recordEvent();
                    points.add(p);
                    if (i % 2 == 0) {
                        engine.await(p, Duration.ofSeconds(20)).subscribe(v -> { }, errors::add, kept::countDown);
                    } else {
                        cancelled.add(engine.await(p, Duration.ofSeconds(20))
                                .subscribe(v -> { }, errors::add, () -> signalledCancelled.add(p)));
                    }
                }
            }
            Thread.sleep(100); // past every spin budget: the waits sit behind their streams' callbacks
            cancelled.forEach(Disposable::dispose);
            long until = System.nanoTime() + 2_000 * MS;
            while (engine.pendingWaits() > 500 && System.nanoTime() < until) {
                Thread.sleep(1);
            }
            assertThat(engine.pendingWaits()).as("pending once the cancelled half was freed").isEqualTo(500);

            assertThat(kept.await(20, TimeUnit.SECONDS)).as("every wait not cancelled completed").isTrue();
            assertThat(errors).isEmpty();
            assertThat(signalledCancelled).as("cancelled waits are never signalled").isEmpty();
            assertThat(engine.pendingWaits()).isZero();
            points.forEach(p -> p.waiter().close());
        } finally {
            engine.dispose();
            queues.forEach(CudaWorkQueue::close);
        }
    }
}
