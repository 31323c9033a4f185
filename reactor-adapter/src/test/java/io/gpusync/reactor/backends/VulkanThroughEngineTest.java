package io.gpusync.reactor.backends;

import io.gpusync.DeviceLostException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import io.gpusync.spi.WakeableWaiter;
import io.gpusync.bindings.vulkan.PFN_vkCreateFence;
import io.gpusync.bindings.vulkan.PFN_vkSignalSemaphore;
import io.gpusync.bindings.vulkan.VkFenceCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreSignalInfo;
import io.gpusync.bindings.vulkan.Vulkan;
import io.gpusync.test.vulkan.VulkanContext;
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
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

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

    /**
     * A timeline value forced onto the BLOCKING path (a waiter that offers only its wakeable blocking wait) in an
     * engine with 10 s slices: cancelled, its pool thread leaves {@code vkWaitSemaphores} at once, woken through
     * the device's companion semaphore — within 2 s, where the slice alone would take 10 s.
     */
    @Test
    void aCancelledBlockingWaitOnATimelineValueFreesItsPoolThreadAtOnce() throws InterruptedException {
        SyncEngine blocking = GpuSync.builder().name("vulkan-wake").blockingSlice(Duration.ofSeconds(10)).build();
        SyncPoint.Vulkan base = vk.device().createTimelineSemaphore(0);
        try {
            SyncWaiter waiter = new WakeableOnly((WakeableWaiter) base.withValue(1).waiter());
            assertThat(blocking.pathFor(waiter)).isEqualTo(WaitPath.BLOCKING);
            Disposable wait = blocking.await(waiter, Duration.ofMinutes(1)).subscribe();
            awaitPoolThreadsInVkWait(blocking, 1);

            wait.dispose();

            assertThat(blocking.pendingWaits()).isZero();
            awaitPoolThreadsInVkWait(blocking, 0);
        } finally {
            vk.device().hostSignal(base.semaphore(), 1);
            blocking.dispose();
            base.waiter().close();
        }
    }

    private record WakeableOnly(WakeableWaiter inner) implements WakeableWaiter {
        @Override
        public void await(Duration timeout) {
            inner.await(timeout);
        }

        @Override
        public void await(Duration timeout, BooleanSupplier abandoned) {
            inner.await(timeout, abandoned);
        }

        @Override
        public void wakeWaiters() {
            inner.wakeWaiters();
        }

        @Override
        public boolean isSignaled() {
            return inner.isSignaled();
        }

        @Override
        public io.gpusync.BackendKind backend() {
            return inner.backend();
        }
    }

    /** Waits (2 s at most) until {@code n} pool threads of {@code e} are inside a timeline waiter's {@code await}. */
    private static void awaitPoolThreadsInVkWait(SyncEngine e, int n) throws InterruptedException {
        String prefix = "gpusync-" + e.name() + "-waiter-";
        long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (true) {
            long inWait = Thread.getAllStackTraces().entrySet().stream()
                    .filter(t -> t.getKey().getName().startsWith(prefix))
                    .filter(t -> Arrays.stream(t.getValue()).anyMatch(f -> f.getClassName()
                            .equals("io.gpusync.vulkan.TimelineSemaphoreWaiter") && f.getMethodName().equals("await")))
                    .count();
            if (inWait == n) {
                return;
            }
            assertThat(System.nanoTime() - deadline).as(n + " pool threads in vkWaitSemaphores within 2 s, not "
                    + inWait).isNegative();
            Thread.sleep(1);
        }
    }

    /**
     * A wait-set server with nothing to wait for holds nothing alive: a device whose last waiter is closed is
     * released, and the server serving it ends within seconds, not after its 30 s idle time (an idle server
     * used to sit in the set's wait-any, which holds the device, so a closed device and its thread lived on).
     */
    @Test
    void theWaitSetServerOfAClosedDeviceLetsTheDeviceGoAndEnds() throws InterruptedException {
        SyncEngine own = GpuSync.builder().name("vulkan-idle").build();
        try {
            VulkanContext ctx = VulkanContext.create();
            SyncPoint.Vulkan base = ctx.device().createTimelineSemaphore(0);
            SyncPoint at1 = base.withValue(1);
            StepVerifier.create(own.await(at1, Duration.ofSeconds(10)))
                    .then(() -> ctx.device().hostSignal(base.semaphore(), 1))
                    .verifyComplete();
            assertThat(waitSetThreads(own)).isEqualTo(1);
            at1.waiter().close();
            base.waiter().close();
            ctx.close();
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (waitSetThreads(own) > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(waitSetThreads(own)).as("wait-set servers of a closed device after 5 s").isZero();
        } finally {
            own.dispose();
        }
    }

    private static long waitSetThreads(SyncEngine e) {
        String prefix = "gpusync-" + e.name() + "-waitset-";
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
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
