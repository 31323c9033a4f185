package io.gpusync.test;

import io.gpusync.DeviceLostException;
import io.gpusync.SyncPoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A virtual GPU's work ends when the test moves Reactor's virtual clock, and only then. */
class VirtualGpuTest {
    /** Real-time bound for a verifier to see what the clock already decided (engine hand-off). */
    private static final Duration LIVENESS = Duration.ofSeconds(30);

    @AfterEach
    void resetClock() {
        VirtualTimeScheduler.reset();
    }

    @Test
    void queuesOfOneGpuRunSideBySide() {
        VirtualGpu gpu = VirtualGpu.on(VirtualTimeScheduler.create());
        FakeGpuQueue copy = gpu.newQueue();
        SyncPoint kernel = gpu.submit(Duration.ofMillis(10));
        SyncPoint upload = copy.submit(Duration.ofMillis(3));

        gpu.advance(Duration.ofMillis(3));

        assertThat(upload.waiter().isSignaled()).as("the copy queue does not wait for the kernel").isTrue();
        assertThat(kernel.waiter().isSignaled()).isFalse();
    }

    @Test
    void losingTheDeviceFailsEveryQueue() {
        VirtualGpu gpu = VirtualGpu.on(VirtualTimeScheduler.create());
        List<SyncPoint> points = List.of(gpu.submit(Duration.ofMillis(1)), gpu.newQueue().submit(Duration.ofMillis(1)));

        gpu.loseDevice(new IllegalStateException("simulated"));

        for (SyncPoint p : points) {
            assertThat(CompletableFuture.runAsync(() -> p.waiter().await(LIVENESS)))
                    .failsWithin(LIVENESS).withThrowableThat().havingCause().isInstanceOf(DeviceLostException.class);
        }
    }

    @Test
    void aThreadBlockedOnAPointWakesWhenAnotherThreadAdvancesTheClock() throws Exception {
        VirtualGpu gpu = VirtualGpu.on(VirtualTimeScheduler.create());
        SyncPoint point = gpu.submit(Duration.ofSeconds(5));
        CompletableFuture<Void> blocked = CompletableFuture.runAsync(() -> point.waiter().await(LIVENESS));

        gpu.advance(Duration.ofSeconds(4));
        assertThat(blocked).isNotDone();
        gpu.advance(Duration.ofSeconds(1));

        blocked.get(LIVENESS.toSeconds(), TimeUnit.SECONDS);
        assertThat(gpu.queue().completed()).isEqualTo(1);
    }

    @Test
    void reactorTimersAndTheGpuShareOneClock() {
        StepVerifier.withVirtualTime(() -> {
                    VirtualGpu gpu = VirtualGpu.create();
                    SyncPoint frame = gpu.submit(Duration.ofMillis(16));
                    return Mono.delay(Duration.ofMillis(16)).then(Mono.fromCallable(() -> frame.waiter().isSignaled()));
                })
                .expectSubscription()
                .thenAwait(Duration.ofMillis(16))
                .expectNext(true)
                .expectComplete()
                .verify(LIVENESS);
    }
}
