package io.gpusync.cuda;

import static io.gpusync.cuda.CudaTestSupport.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.CUuuid;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.test.vulkan.ExportingVulkanDevice;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Vulkan → CUDA → Vulkan through an exported timeline semaphore, with nothing but the raw Vulkan bindings on the
 * Vulkan side ({@link ExportingVulkanDevice}: no dependency on gpusync's Vulkan package): a Vulkan timeline semaphore
 * exported as an opaque fd is imported into CUDA; a CUDA stream waits for Vulkan's value 1 before advancing a host
 * timeline and signalling value 2, which Vulkan then waits for; then the CPU awaits the imported semaphore itself.
 */
@Tag("gpu")
class CudaVulkanBridgeGpuTest {

    @Test
    void vulkanSignalsCudaAndCudaSignalsVulkan() {
        assumeCuda();
        MemorySegment ctx = primaryContext();
        byte[] cudaUuid = deviceUuid();
        try (ExportingVulkanDevice vk = exportingDevice(cudaUuid)) {
            long semaphore = vk.createSemaphore(true, 0);
            try {
                bridge(vk, semaphore, ctx);
            } finally {
                vk.destroySemaphore(semaphore);
            }
        }
    }

    private static void bridge(ExportingVulkanDevice vk, long semaphore, MemorySegment ctx) {
        int fd = vk.exportOpaqueFd(semaphore);
        push(ctx);
        MemorySegment stream = stream();
        try (CudaExternalSemaphore imported = CudaExternalSemaphore.importTimelineFd(fd, ctx);
             CudaHostTimeline timeline = CudaHostTimeline.create(ctx)) {
            imported.waitAsync(stream, 1);          // CUDA waits for Vulkan's 1
            SyncPoint.Cuda afterVulkan = timeline.advance(stream);
            imported.signalAsync(stream, 2);        // then CUDA signals 2 for Vulkan

            sleep(50);
            assertThat(afterVulkan.isSignaled()).as("CUDA is held by the Vulkan semaphore").isFalse();
            vk.hostSignal(semaphore, 1);
            afterVulkan.await(Duration.ofSeconds(10));
            assertThat(vk.waitFor(semaphore, 2, 10_000_000_000L)).as("Vulkan sees CUDA's signal of 2").isTrue();
            sync(stream);

            // --- the CPU awaits the imported semaphore itself: a SyncPoint.Cuda over it ---
            MemorySegment own = stream();
            try {
                SyncPoint.Cuda atThree = imported.point(own, 3);
                assertThat(atThree.waiter()).isInstanceOf(CudaExternalSemaphoreWaiter.class);
                assertThat(atThree.value()).hasValue(3);
                assertThat(atThree.isSignaled()).as("Vulkan has not signalled 3").isFalse();
                assertThatThrownBy(() -> atThree.await(Duration.ofMillis(20)))
                        .isInstanceOf(io.gpusync.SyncTimeoutException.class);
                SyncPoint atFour = atThree.withValue(4); // a new wait at 4, nothing of 3 carried over
                vk.hostSignal(semaphore, 3);
                atThree.await(Duration.ofSeconds(10));
                assertThat(atThree.isSignaled()).isTrue();
                assertThat(atFour.isSignaled()).as("4 is not signalled yet").isFalse();
                vk.hostSignal(semaphore, 4);
                atFour.await(Duration.ofSeconds(10));
                atThree.waiter().close();
                atFour.waiter().close();
                sync(own);
            } finally {
                check(Cuda.cuStreamDestroy_v2(own), "cuStreamDestroy");
            }
        } finally {
            check(Cuda.cuStreamDestroy_v2(stream), "cuStreamDestroy");
            pop();
        }
    }

    /**
     * Closing an imported semaphore while a wait on another one is pending in the same context neither blocks the
     * closing thread nor the driver: {@code cuDestroyExternalSemaphore} would not return until that wait passes,
     * holding the driver's lock (the soak's CUDA worker then blocked in {@code cuEventCreate} for good, before it
     * could signal the semaphore the wait needed). gpusync destroys it once no such wait is pending.
     */
    @Test
    void closingAnImportedSemaphoreWhileAnotherWaitIsPendingBlocksNeitherTheCallerNorTheDriver() throws Exception {
        assumeCuda();
        MemorySegment ctx = primaryContext();
        byte[] cudaUuid = deviceUuid();
        try (ExportingVulkanDevice vk = exportingDevice(cudaUuid)) {
            long gated = vk.createSemaphore(true, 0);
            long other = vk.createSemaphore(true, 0);
            push(ctx);
            MemorySegment gatedStream = stream();
            MemorySegment otherStream = stream();
            try {
                CudaExternalSemaphore held = CudaExternalSemaphore.importTimelineFd(vk.exportOpaqueFd(gated), ctx);
                CudaExternalSemaphore closed = CudaExternalSemaphore.importTimelineFd(vk.exportOpaqueFd(other), ctx);
                SyncPoint.Cuda pending = held.point(gatedStream, 1); // Vulkan has not signalled 1
                SyncPoint.Cuda passed = closed.point(otherStream, 1);
                vk.hostSignal(other, 1);
                passed.await(Duration.ofSeconds(10));

                java.util.concurrent.CompletableFuture<SyncPoint.CudaEvent> closing = new java.util.concurrent.CompletableFuture<>();
                Thread.ofPlatform().daemon().start(() -> { // on a thread of its own: a hang must fail, not stall the test
                    try {
                        passed.waiter().close();
                        closed.close(); // its last hold: the destroy is held back while the other wait is pending
                        closing.complete(CudaEvents.record(otherStream, ctx)); // the driver is free
                    } catch (Throwable t) {
                        closing.completeExceptionally(t);
                    }
                });
                SyncPoint.CudaEvent afterwards = closing.get(2, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(CudaDriverService.get().gatedWaits().heldBack()).isPositive();

                vk.hostSignal(gated, 1);
                pending.await(Duration.ofSeconds(10));
                long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                while (CudaDriverService.get().gatedWaits().heldBack() > 0 && System.nanoTime() < deadline) {
                    sleep(5);
                }
                assertThat(CudaDriverService.get().gatedWaits().heldBack()).as("destroyed once the wait passed").isZero();
                afterwards.await(Duration.ofSeconds(10));
                pending.waiter().close();
                afterwards.waiter().close();
                held.close();
                sync(gatedStream);
                sync(otherStream);
            } finally {
                check(Cuda.cuStreamDestroy_v2(gatedStream), "cuStreamDestroy");
                check(Cuda.cuStreamDestroy_v2(otherStream), "cuStreamDestroy");
                pop();
                vk.hostSignal(gated, 2);
                vk.destroySemaphore(gated);
                vk.destroySemaphore(other);
            }
        }
    }

    /** Device 0's UUID, to open the Vulkan device that is the same GPU. */
    private static byte[] deviceUuid() {
        byte[] out = new byte[16];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment uuid = CUuuid.allocate(arena);
            check(Cuda.cuDeviceGetUuid_v2(uuid, 0), "cuDeviceGetUuid_v2");
            MemorySegment.copy(uuid, ValueLayout.JAVA_BYTE, 0, out, 0, 16);
        }
        return out;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A Vulkan device that exports semaphores, or the test skips saying why there is none. */
    private static ExportingVulkanDevice exportingDevice(byte[] uuid) {
        try {
            return ExportingVulkanDevice.open(uuid);
        } catch (SyncNotSupportedException e) {
            org.junit.jupiter.api.Assumptions.abort(e.getMessage());
            throw e;
        }
    }
}
