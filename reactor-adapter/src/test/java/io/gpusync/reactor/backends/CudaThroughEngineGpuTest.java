package io.gpusync.reactor.backends;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.test.cuda.CudaWorkQueue;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** CUDA through the engine, on a real GPU (the H200): events and the host-memory timeline. */
@Tag("gpu")
class CudaThroughEngineGpuTest {
    private static final long MS = 1_000_000L;
    private static CudaWorkQueue gpu;
    private static SyncEngine engine;

    @BeforeAll
    static void open() {
        try {
            gpu = CudaWorkQueue.open(0);
        } catch (SyncNotSupportedException absent) {
            assumeTrue(false, "no CUDA driver or device here: " + absent.getMessage());
        }
        engine = GpuSync.builder().name("cuda").build();
    }

    @AfterAll
    static void close() {
        if (engine != null) {
            engine.dispose();
        }
        if (gpu != null) {
            gpu.close();
        }
    }

    @Test
    void anEventAfterAKernelCompletesTheMonoOnTheSpinThenCallbackPath() {
        gpu.launchSpin(20 * MS);
        SyncPoint event = gpu.recordEvent();
        assertThat(engine.pathFor(event.waiter())).isEqualTo(WaitPath.SPIN_THEN_CALLBACK);
        assertThat(event.isSignaled()).isFalse();
        StepVerifier.create(engine.await(event, Duration.ofSeconds(10))).verifyComplete();
        assertThat(event.isSignaled()).isTrue();
    }

    @Test
    void aHostTimelineValueCompletesTheMono() {
        gpu.launchSpin(20 * MS);
        SyncPoint value = gpu.advanceTimeline();
        assertThat(engine.pathFor(value.waiter())).isEqualTo(WaitPath.SPIN_THEN_CALLBACK);
        StepVerifier.create(engine.await(value, Duration.ofSeconds(10))).verifyComplete();
    }

    @Test
    void aShortKernelIsCaughtWhileSpinning() {
        gpu.synchronize();
        gpu.launchSpin(1_000); // 1 µs
        StepVerifier.create(engine.await(gpu.advanceTimeline(), Duration.ofSeconds(10))).verifyComplete();
    }

    @Test
    void aWaitTimesOutAndACancelledOneIsFreed() {
        gpu.launchSpin(300 * MS);
        SyncPoint event = gpu.recordEvent();
        StepVerifier.create(engine.await(event, Duration.ofMillis(30)))
                .expectError(SyncTimeoutException.class)
                .verify(Duration.ofSeconds(10));
        Disposable d = engine.await(gpu.advanceTimeline(), SyncPoint.FOREVER).subscribe();
        d.dispose();
        assertThat(engine.pendingWaits()).isZero();
        gpu.synchronize();
    }

    @Test
    void tenThousandInFlightEventsCompleteThroughAwaitAll() {
        gpu.synchronize();
        List<SyncPoint> events = new ArrayList<>(10_000);
        gpu.launchSpin(50 * MS); // keep them all in flight while they are registered
        for (int i = 0; i < 10_000; i++) {
            gpu.launchSpin(1_000);
            events.add(gpu.recordEvent());
        }
        StepVerifier.create(GpuSync.awaitAll(events, Duration.ofSeconds(60))).verifyComplete();
        assertThat(events.stream().allMatch(SyncPoint::isSignaled)).isTrue();
        assertThat(GpuSync.defaultEngine().pendingWaits()).isZero();
        events.forEach(p -> p.waiter().close());
    }
}
