package com.example.cudaonly;

import io.gpusync.SyncPoint;
import io.gpusync.cuda.CudaEvents;
import io.gpusync.reactor.GpuSync;
import io.gpusync.test.FakeGpuQueue;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.function.BiFunction;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A consumer with the BOM, gpusync-cuda, the engine and the test kit: it compiles against them, sees no other GPU
 * backend, and tests its waits on the kit's fake queue without a GPU.
 */
class CudaOnlyConsumerTest {

    @Test
    void cudaAndTheEngineAreThereAndNoOtherBackendIs() {
        BiFunction<Long, Long, SyncPoint.CudaEvent> borrow = CudaEvents::borrow; // compiles against gpusync-cuda
        assertNotNull(borrow);
        assertNotNull(GpuSync.class);
        for (String absent : List.of("io.gpusync.vulkan.VulkanDevice", "io.gpusync.gl.EglSyncs",
                "io.gpusync.opencl.OpenClEvents", "io.gpusync.d3d12.D3D12Fences",
                "io.gpusync.bindings.vulkan.Vulkan", "io.gpusync.bindings.opencl.OpenCl")) {
            assertThrows(ClassNotFoundException.class, () -> Class.forName(absent), absent);
        }
    }

    @Test
    void theTestKitWaitsWithoutAGpu() {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        FakeGpuQueue queue = FakeGpuQueue.on(clock);
        SyncPoint kernel = queue.submit(Duration.ofMillis(5));
        Mono<Void> done = GpuSync.await(kernel, Duration.ofSeconds(30)).cache();
        done.subscribe();
        clock.advanceTimeBy(Duration.ofMillis(5));
        done.block(Duration.ofSeconds(30)); // completes: the kernel ended on the virtual clock
    }
}
