package io.gpusync.reactor.backends;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.test.cuda.CudaWorkQueue;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * One engine over every CUDA device of the host: events and host-timeline values of several devices awaited at
 * once ({@code awaitAll}, {@code awaitAny}, {@code awaitEach}), served by one spin poller in total. Needs two CUDA
 * devices (the {@code nvidia-h200-x2} machine); on one GPU every test is skipped, saying so.
 */
@Tag("gpu")
@Tag("multi-gpu")
class MultiDeviceThroughEngineGpuTest {
    private static final long MS = 1_000_000L;
    private static final List<CudaWorkQueue> GPUS = new ArrayList<>();
    private static SyncEngine engine;

    @BeforeAll
    static void open() {
        int count;
        try {
            CudaWorkQueue.open(0).close(); // loads the driver, or says why it cannot
            count = deviceCount();
        } catch (SyncNotSupportedException absent) {
            count = 0;
        }
        assumeTrue(count >= 2, "needs two CUDA devices; this machine has " + count
                + " (the multi-GPU tests run on nvidia-h200-x2)");
        for (int d = 0; d < Math.min(count, 8); d++) {
            GPUS.add(CudaWorkQueue.open(d));
        }
        engine = GpuSync.builder().name("multi").build();
    }

    @AfterAll
    static void close() {
        if (engine != null) {
            engine.dispose();
        }
        GPUS.forEach(CudaWorkQueue::close);
    }

    @Test
    void oneEngineAwaitsEventsAndTimelineValuesOfEveryDeviceAtOnceWithOneSpinPoller() {
        List<SyncPoint> points = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            for (CudaWorkQueue gpu : GPUS) {
                gpu.launchSpin(MS);
                points.add(gpu.recordEvent());
                points.add(gpu.advanceTimeline());
            }
        }
        StepVerifier.create(engine.awaitAll(points, Duration.ofSeconds(30))).verifyComplete();
        assertThat(points).allMatch(SyncPoint::isSignaled);
        long pollers = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("gpusync-multi-poller-")).count();
        assertThat(pollers).as("spin pollers of the engine, whatever the number of devices").isLessThanOrEqualTo(1);
    }

    @Test
    void awaitAnyAcrossDevicesCompletesWithTheFirstDevicesWorkAndLeavesTheOtherRunning() {
        CudaWorkQueue fast = GPUS.get(0);
        CudaWorkQueue slow = GPUS.get(1);
        slow.launchSpin(2_000 * MS);
        SyncPoint late = slow.recordEvent();
        fast.launchSpin(5 * MS);
        SyncPoint early = fast.recordEvent();
        StepVerifier.create(engine.awaitAny(List.of(late, early), Duration.ofSeconds(10)))
                .expectComplete()
                .verify(Duration.ofSeconds(1));
        assertThat(early.isSignaled()).isTrue();
        assertThat(late.isSignaled()).as("device 1 still spinning").isFalse();
        slow.synchronize();
    }

    @Test
    void awaitEachAcrossDevicesEmitsInSubmissionOrder() {
        List<SyncPoint> points = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            CudaWorkQueue gpu = GPUS.get(i % GPUS.size());
            gpu.launchSpin((i % 3 == 0 ? 3 : 1) * MS); // later items on one device may finish before earlier ones on another
            points.add(gpu.advanceTimeline());
        }
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < points.size(); i++) {
            expected.add(i);
        }
        StepVerifier.create(Flux.range(0, points.size())
                        .transform(engine.awaitEach(points::get, 8, Duration.ofSeconds(30))))
                .expectNextSequence(expected)
                .verifyComplete();
    }

    private static int deviceCount() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            return Cuda.cuDeviceGetCount(count) == 0 ? count.get(ValueLayout.JAVA_INT, 0) : 0;
        }
    }
}
