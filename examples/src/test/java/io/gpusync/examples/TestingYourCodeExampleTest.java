package io.gpusync.examples;

import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.DeviceLostException;
import io.gpusync.reactor.GpuSync;
import io.gpusync.test.VirtualGpu;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;

class TestingYourCodeExampleTest {
    /** The code under test: answers once the GPU work behind a request has ended, or fails after 100 ms. */
    static Mono<String> answer(SyncPoint work) {
        return GpuSync.await(work, Duration.ofMillis(100)).thenReturn("done");
    }

    @Test
    void answersWhenTheKernelEnds() {
        StepVerifier.withVirtualTime(() -> answer(VirtualGpu.create().submit(Duration.ofMillis(40))))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(39))
                .thenAwait(Duration.ofMillis(1))
                .expectNext("done")
                .expectComplete()
                .verify(Duration.ofSeconds(30));
    }

    @Test
    void timesOutWhenTheKernelIsTooSlow() {
        StepVerifier.withVirtualTime(() -> answer(VirtualGpu.create().submit(Duration.ofSeconds(1))))
                .expectSubscription()
                .thenAwait(Duration.ofMillis(100))
                .expectError(SyncTimeoutException.class)
                .verify(Duration.ofSeconds(30));
    }

    @Test
    void failsWhenTheDeviceIsLost() {
        StepVerifier.withVirtualTime(() -> {
                    VirtualGpu gpu = VirtualGpu.create();
                    return answer(gpu.queue().submitFault(Duration.ofMillis(10)));
                })
                .expectSubscription()
                .thenAwait(Duration.ofMillis(10))
                .expectError(DeviceLostException.class)
                .verify(Duration.ofSeconds(30));
    }
}
