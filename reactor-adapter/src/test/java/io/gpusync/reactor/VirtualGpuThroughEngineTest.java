package io.gpusync.reactor;

import io.gpusync.DeviceLostException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.test.VirtualGpu;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.time.Duration;

/**
 * The engine on the test kit's virtual GPU: a wait completes once the test moves Reactor's virtual clock past the
 * end of the work, its timeout fires on the same clock, and a fault fails it with device loss.
 */
class VirtualGpuThroughEngineTest {
    /** Real-time bound for a verifier to see what the clock already decided (engine hand-off). */
    private static final Duration LIVENESS = Duration.ofSeconds(30);

    @AfterEach
    void resetClock() {
        VirtualTimeScheduler.reset();
    }

    @Test
    void anAwaitCompletesOnceTheClockPassesTheEndOfTheWork() {
        StepVerifier.withVirtualTime(() -> {
                    VirtualGpu gpu = VirtualGpu.create();
                    return GpuSync.await(gpu.submit(Duration.ofSeconds(2)));
                })
                .expectSubscription()
                .expectNoEvent(Duration.ofSeconds(1))
                .thenAwait(Duration.ofSeconds(1))
                .expectComplete()
                .verify(LIVENESS);
    }

    @Test
    void anAwaitTimesOutOnTheVirtualClock() {
        StepVerifier.withVirtualTime(() -> {
                    VirtualGpu gpu = VirtualGpu.create();
                    return GpuSync.await(gpu.submit(Duration.ofHours(1)), Duration.ofMinutes(1));
                })
                .expectSubscription()
                .thenAwait(Duration.ofMinutes(1))
                .expectError(SyncTimeoutException.class)
                .verify(LIVENESS);
    }

    @Test
    void aFaultFailsTheAwaitWithDeviceLoss() {
        StepVerifier.withVirtualTime(() -> {
                    VirtualGpu gpu = VirtualGpu.create();
                    gpu.submit(Duration.ofMillis(5));
                    return GpuSync.await(gpu.queue().submitFault(Duration.ofMillis(5)));
                })
                .expectSubscription()
                .thenAwait(Duration.ofMillis(10))
                .expectError(DeviceLostException.class)
                .verify(LIVENESS);
    }
}
