package io.gpusync.reactor.backends;

import io.gpusync.DeviceLostException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import io.gpusync.bindings.vulkan.PFN_vkCreateFence;
import io.gpusync.bindings.vulkan.PFN_vkSignalSemaphore;
import io.gpusync.bindings.vulkan.VkFenceCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreSignalInfo;
import io.gpusync.bindings.vulkan.Vulkan;
import io.gpusync.vulkan.VulkanProducers.VulkanContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
        long raw = rawFence(vk);
        SyncWaiter fence = vk.device().adoptFence(raw);
        assertThat(engine.pathFor(fence)).isEqualTo(WaitPath.BLOCKING);
        StepVerifier.create(engine.await(fence, Duration.ofSeconds(10)))
                .then(() -> vk.signalFenceOnQueue(raw))
                .verifyComplete();
    }

    /** An unsignalled VkFence created straight through the bindings (the caller adopts it). */
    private static long rawFence(VulkanContext ctx) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment device = ctx.device().handle();
            MemorySegment fn = Vulkan.vkGetDeviceProcAddr(device, arena.allocateFrom("vkCreateFence"));
            MemorySegment info = VkFenceCreateInfo.allocate(arena);
            VkFenceCreateInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_FENCE_CREATE_INFO());
            MemorySegment out = arena.allocate(java.lang.foreign.ValueLayout.JAVA_LONG);
            assertThat(PFN_vkCreateFence.invoke(fn, device, info, MemorySegment.NULL, out)).isZero();
            return out.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0);
        }
    }

    /** vkSignalSemaphore straight through the bindings, bypassing VulkanDevice.hostSignal's guard. */
    private static int rawHostSignal(VulkanContext ctx, long semaphore, long value) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment device = ctx.device().handle();
            MemorySegment fn = Vulkan.vkGetDeviceProcAddr(device, arena.allocateFrom("vkSignalSemaphore"));
            MemorySegment info = VkSemaphoreSignalInfo.allocate(arena);
            VkSemaphoreSignalInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO());
            VkSemaphoreSignalInfo.semaphore(info, MemorySegment.ofAddress(semaphore));
            VkSemaphoreSignalInfo.value(info, value);
            return PFN_vkSignalSemaphore.invoke(fn, device, info);
        }
    }

    @Test
    void aLostDeviceFailsPendingWaitsWithDeviceLost() {
        try (VulkanContext own = VulkanContext.create()) { // device loss is sticky: a device of its own
            SyncPoint.Vulkan base = own.device().createTimelineSemaphore(5);
            StepVerifier.create(engine.await(base.withValue(10), Duration.ofSeconds(10)))
                    .then(() -> {
                        int r = rawHostSignal(own, base.semaphore(), 3); // lowering a timeline: invalid usage
                        assumeTrue(r == Vulkan.VK_ERROR_DEVICE_LOST(), own.deviceName() + " did not lose the device"
                                + " on a lowered host signal (returned " + r + "); device loss is exercised on lavapipe");
                    })
                    .expectError(DeviceLostException.class)
                    .verify(Duration.ofSeconds(20));
        }
    }
}
