package com.example.plain;

import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.reactor.GpuSync;
import io.gpusync.test.vulkan.VulkanContext;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A consumer with only the BOM and gpusync-reactor-adapter (and the test kit for its Vulkan producer): no Netty, a host
 * timeline and a Vulkan device.
 */
class PlainConsumerTest {

    @Test
    void nettyIsNotOnTheClassPath() {
        assertThrows(ClassNotFoundException.class, () -> Class.forName("io.netty.channel.EventLoopGroup"));
    }

    @Test
    void aCpuTimelineWaitCompletesOnceTheTimelineReachesItsValue() {
        CpuTimeline queue = new CpuTimeline();
        AtomicBoolean done = new AtomicBoolean();
        Mono<Void> wait = GpuSync.await(queue.at(2), Duration.ofSeconds(5)).doOnSuccess(v -> done.set(true));

        CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS).execute(() -> queue.signal(1));
        CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS).execute(() -> queue.signal(2));
        wait.block(Duration.ofSeconds(10));

        assertTrue(done.get());
        assertEquals(2, queue.value());
    }

    @Test
    void aVulkanTimelineWaitOnLavapipeCompletesWhenTheQueueSignals() {
        try (VulkanContext vulkan = VulkanContext.create()) {
            assertTrue(vulkan.deviceName().contains("llvmpipe"), vulkan.deviceName());
            SyncPoint.Vulkan created = vulkan.device().createTimelineSemaphore(0);
            SyncPoint one = created.withValue(1);
            CompletableFuture<Void> done = GpuSync.await(one, Duration.ofSeconds(10)).toFuture();
            assertFalse(done.isDone());

            vulkan.signalOnQueue(created.semaphore(), 1);   // the GPU queue signals value 1

            done.orTimeout(10, TimeUnit.SECONDS).join();
            assertEquals(1, vulkan.device().counterValue(created.semaphore()));
        }
    }
}
