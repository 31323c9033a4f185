package io.gpusync.cuda;

import static io.gpusync.cuda.CudaTestSupport.assumeCuda;
import static io.gpusync.cuda.CudaTestSupport.check;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.bindings.cuda.CUuuid;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.testsuite.SyncWaiterContract;
import io.gpusync.test.vulkan.ExportingVulkanDevice;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The backend contract on a CUDA external semaphore: a Vulkan timeline semaphore exported as an opaque fd, imported
 * into CUDA ({@link CudaExternalSemaphore#importTimelineFd}); the subject's point waits for value 1 on a stream of
 * its own ({@link CudaExternalSemaphore#point}), and the subject signals it from the Vulkan side
 * ({@code vkSignalSemaphore}). The import is the producer's hold ({@link Subject#dropProducerHolds()}); the native
 * object is released once {@code cuDestroyExternalSemaphore} has returned ({@link CudaExternalSemaphore#whenReleased}).
 * Needs CUDA and a Vulkan device on the same GPU that exports semaphores; skipped, with the reason, otherwise.
 */
@Tag("gpu")
class CudaExternalSemaphoreContractGpuTest extends SyncWaiterContract {
    private static MemorySegment ctx;
    private static ExportingVulkanDevice vulkan;

    @BeforeAll
    static void open() {
        assumeCuda();
        ctx = CudaTestSupport.primaryContext();
        try {
            vulkan = ExportingVulkanDevice.open(deviceUuid());
        } catch (SyncNotSupportedException e) {
            Assumptions.abort(e.getMessage());
        }
    }

    @AfterAll
    static void close() {
        if (vulkan != null) {
            vulkan.close();
        }
    }

    @Override
    protected Subject newSubject() {
        long semaphore = vulkan.createSemaphore(true, 0);
        CudaExternalSemaphore imported = CudaExternalSemaphore.importTimelineFd(vulkan.exportOpaqueFd(semaphore), ctx);
        CudaTestSupport.push(ctx);
        MemorySegment stream;
        try {
            stream = CudaTestSupport.stream();
        } finally {
            CudaTestSupport.pop();
        }
        SyncPoint.Cuda point = imported.point(stream, 1);
        return new OnceSubject() {
            @Override
            public SyncWaiter waiter() {
                return point.waiter();
            }

            @Override
            protected void doSignal() {
                vulkan.hostSignal(semaphore, 1);
            }

            @Override
            public void dropProducerHolds() {
                imported.close();
            }

            @Override
            public boolean released() {
                return imported.whenReleased().toCompletableFuture().isDone();
            }

            @Override
            public void close() {
                signal(); // no wait left pending in the context: the semaphore can then be destroyed
                imported.close();
                point.waiter().close();
                CudaTestSupport.push(ctx);
                try {
                    CudaTestSupport.sync(stream);
                    check(Cuda.cuStreamDestroy_v2(stream), "cuStreamDestroy");
                } finally {
                    CudaTestSupport.pop();
                }
                try { // Vulkan may destroy its semaphore only once CUDA has destroyed the import
                    imported.whenReleased().toCompletableFuture().get(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new AssertionError("the imported semaphore was never destroyed", e);
                }
                vulkan.destroySemaphore(semaphore);
            }
        };
    }

    private static byte[] deviceUuid() {
        byte[] out = new byte[16];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment uuid = CUuuid.allocate(arena);
            check(Cuda.cuDeviceGetUuid_v2(uuid, 0), "cuDeviceGetUuid_v2");
            MemorySegment.copy(uuid, ValueLayout.JAVA_BYTE, 0, out, 0, 16);
        }
        return out;
    }
}
