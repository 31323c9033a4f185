package io.gpusync.reactor.backends;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.test.cuda.CudaWorkQueue;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * 10,000 virtual threads blocked in {@link SyncEngine#block} on CUDA events and on CUDA host-timeline values, queued
 * behind a 2 s kernel (the GPU signals them itself): all return, no carrier is pinned, no platform thread appears
 * but the engine's own (see {@link BlockedVirtualThreads}). On a real GPU (the H200).
 */
@Tag("gpu")
class CudaVirtualThreadsGpuTest {
    private static final int N = 10_000;
    private static final long GATE_NANOS = 2_000_000_000L;
    private static CudaWorkQueue gpu;
    private SyncEngine engine;

    @BeforeAll
    static void open() {
        try {
            gpu = CudaWorkQueue.open(0);
        } catch (SyncNotSupportedException absent) {
            assumeTrue(false, "no CUDA driver or device here: " + absent.getMessage());
        }
    }

    @AfterAll
    static void close() {
        if (gpu != null) {
            gpu.close();
        }
    }

    /** CUDA's callback threads, attached by the JVM as {@code Thread-<n>} at their first host function. */
    private static final Predicate<String> CUDA_CALLBACK_THREAD = name -> name.matches("Thread-\\d+");

    @BeforeEach
    void newEngine() {
        engine = GpuSync.builder().name("vt-cuda").build();
        gpu.synchronize();
        // one wait of each kind past the spin budget, so that CUDA's callback thread has called back once already
        gpu.launchSpin(20_000_000L);
        SyncPoint event = gpu.recordEvent();
        engine.block(event, Duration.ofSeconds(10));
        event.waiter().close();
        gpu.launchSpin(20_000_000L);
        engine.block(gpu.advanceTimeline(), Duration.ofSeconds(10));
    }

    @AfterEach
    void dispose() {
        engine.dispose();
        gpu.synchronize();
    }

    @Test
    void tenThousandVirtualThreadsBlockedOnCudaEventsNeitherPinNorAddThreads() throws Exception {
        List<SyncPoint> events = new ArrayList<>(N);
        gpu.launchSpin(GATE_NANOS); // every event stays in flight while the threads block
        for (int i = 0; i < N; i++) {
            gpu.launchSpin(1_000);
            events.add(gpu.recordEvent());
        }
        try {
            BlockedVirtualThreads.Report report = BlockedVirtualThreads.run(engine, N, events::get, null,
                    Duration.ofMinutes(2));
            report.assertNoPinningAndNoThreadPerWait("gpusync-vt-cuda-", CUDA_CALLBACK_THREAD);
            assertThat(events).allMatch(SyncPoint::isSignaled);
        } finally {
            gpu.synchronize();
            events.forEach(p -> p.waiter().close());
        }
    }

    @Test
    void tenThousandVirtualThreadsBlockedOnCudaHostTimelineValuesNeitherPinNorAddThreads() throws Exception {
        List<SyncPoint> values = new ArrayList<>(N);
        gpu.launchSpin(GATE_NANOS);
        for (int i = 0; i < N; i++) {
            gpu.launchSpin(1_000);
            values.add(gpu.advanceTimeline());
        }
        BlockedVirtualThreads.Report report = BlockedVirtualThreads.run(engine, N, values::get, null,
                Duration.ofMinutes(2));
        report.assertNoPinningAndNoThreadPerWait("gpusync-vt-cuda-", CUDA_CALLBACK_THREAD);
        assertThat(values.getLast().isSignaled()).isTrue();
    }

    /** An interrupted virtual thread blocked on an event still in flight frees its wait before block throws. */
    @Test
    void anInterruptedVirtualThreadFreesItsCudaWaitBeforeBlockThrows() throws Exception {
        gpu.launchSpin(GATE_NANOS);
        SyncPoint event = gpu.recordEvent();
        int[] pendingAtThrow = {-1};
        Throwable[] thrown = new Throwable[1];
        Thread t = Thread.ofVirtual().start(() -> {
            try {
                engine.block(event, Duration.ofMinutes(1));
            } catch (Throwable e) {
                pendingAtThrow[0] = engine.pendingWaits();
                thrown[0] = e;
            }
        });
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (engine.pendingWaits() != 1 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(event.isSignaled()).isFalse();
        long t0 = System.nanoTime();
        t.interrupt();
        t.join();
        System.out.printf("CUDA event: interrupt → block threw in %.1f µs%n", (System.nanoTime() - t0) / 1e3);
        assertThat(thrown[0]).isInstanceOf(io.gpusync.SyncCancelledException.class);
        assertThat(pendingAtThrow[0]).isZero();
        gpu.synchronize();
        event.waiter().close();
    }
}
