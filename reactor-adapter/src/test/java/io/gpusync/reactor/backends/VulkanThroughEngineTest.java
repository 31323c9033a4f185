package io.gpusync.reactor.backends;

import io.gpusync.DeviceLostException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import io.gpusync.vulkan.VulkanContext;
import io.gpusync.vulkan.VulkanFenceWaiter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Vulkan (lavapipe here, NVIDIA on the H200) through the engine: timelines on the wait-set path, fences blocking. */
class VulkanThroughEngineTest {
    private static VulkanContext vk;
    private static SyncEngine engine;

    @BeforeAll
    static void open() {
        try {
            vk = VulkanContext.create();
        } catch (SyncNotSupportedException absent) {
            assumeTrue(false, "no Vulkan driver here: " + absent.getMessage());
        }
        engine = GpuSync.builder().name("vulkan").build();
    }

    @AfterAll
    static void close() {
        if (engine != null) {
            engine.dispose();
        }
        if (vk != null) {
            vk.close();
        }
    }

    @Test
    void aHostSignalledTimelineValueCompletesTheMonoOnTheWaitSetPath() {
        SyncPoint.Vulkan base = vk.device().createTimelineSemaphore(0);
        SyncPoint at1 = base.withValue(1);
        assertThat(engine.pathFor(at1.waiter())).isEqualTo(WaitPath.WAIT_SET);
        StepVerifier.create(engine.await(at1, Duration.ofSeconds(10)))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(20))
                .then(() -> vk.device().hostSignal(base.semaphore(), 1))
                .verifyComplete();
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void aQueueSignalledTimelineValueCompletesTheMono() {
        SyncPoint.Vulkan base = vk.device().createTimelineSemaphore(0);
        StepVerifier.create(engine.await(base.withValue(5), Duration.ofSeconds(10)))
                .then(() -> vk.signalOnQueue(base.semaphore(), 5))
                .verifyComplete();
    }

    @Test
    void manyWaitsOnSeveralSemaphoresOfOneDeviceShareOneThreadAndAllComplete() {
        List<SyncPoint.Vulkan> sems = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            sems.add(vk.device().createTimelineSemaphore(0));
        }
        var all = Flux.range(0, 200)
                .flatMap(i -> engine.await(sems.get(i % 8).withValue(1 + i / 8 % 3), Duration.ofSeconds(30)), 200)
                .then();
        StepVerifier.create(all)
                .expectSubscription()
                .then(() -> sems.forEach(s -> vk.signalOnQueue(s.semaphore(), 3)))
                .verifyComplete();
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void anUnsignalledValueTimesOutAndACancelledOneIsFreed() {
        SyncPoint.Vulkan base = vk.device().createTimelineSemaphore(0);
        StepVerifier.create(engine.await(base.withValue(1), Duration.ofMillis(50)))
                .expectError(SyncTimeoutException.class)
                .verify(Duration.ofSeconds(10));
        Disposable d = engine.await(base.withValue(1), SyncPoint.FOREVER).subscribe();
        d.dispose();
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void aQueueSignalledFenceCompletesOnTheBlockingPath() {
        VulkanFenceWaiter fence = vk.device().createFence(false);
        assertThat(engine.pathFor(fence)).isEqualTo(WaitPath.BLOCKING);
        StepVerifier.create(engine.await(fence, Duration.ofSeconds(10)))
                .then(() -> vk.signalFenceOnQueue(fence.fence()))
                .verifyComplete();
    }

    @Test
    void aLostDeviceFailsPendingWaitsWithDeviceLost() {
        try (VulkanContext own = VulkanContext.create()) { // device loss is sticky: a device of its own
            SyncPoint.Vulkan base = own.device().createTimelineSemaphore(5);
            StepVerifier.create(engine.await(base.withValue(10), Duration.ofSeconds(10)))
                    .then(() -> {
                        try {
                            own.signalOnQueue(base.semaphore(), 3); // lowering a timeline: lavapipe loses the device
                        } catch (RuntimeException lostAlready) {
                            // the submit itself may report the loss
                        }
                    })
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOfAny(DeviceLostException.class,
                            SyncTimeoutException.class))
                    .verify(Duration.ofSeconds(20));
        }
    }
}
