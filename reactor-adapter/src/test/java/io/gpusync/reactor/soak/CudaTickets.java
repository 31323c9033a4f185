package io.gpusync.reactor.soak;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.cuda.CudaExternalSemaphore;
import io.gpusync.test.cuda.CudaWorkQueue;
import io.gpusync.test.vulkan.ExportingVulkanDevice;

import java.util.Random;
import java.util.function.UnaryOperator;

/**
 * CUDA points for the soak on an NVIDIA machine: events and host-timeline values behind spin kernels of 1 µs to
 * 2 ms on a few streams, and values of a Vulkan timeline semaphore imported as an external semaphore and waited
 * on by a stream of its own (the host signals it through Vulkan).
 */
final class CudaTickets {
    private static final int STREAMS = 4;
    private static final java.util.concurrent.Executor RELEASES = java.util.concurrent.Executors.newSingleThreadExecutor(
            Thread.ofPlatform().name("soak-cuda-releases").daemon().factory());

    private CudaTickets() {
    }

    static TicketSources.Source source(UnaryOperator<AutoCloseable> opened) {
        CudaWorkQueue[] queues = new CudaWorkQueue[STREAMS];
        for (int i = 0; i < STREAMS; i++) {
            queues[i] = (CudaWorkQueue) opened.apply(CudaWorkQueue.open(0));
        }
        ExportingVulkanDevice vk;
        try {
            vk = (ExportingVulkanDevice) opened.apply(ExportingVulkanDevice.open(null));
        } catch (SyncNotSupportedException noExport) {
            vk = null;
        }
        ExportingVulkanDevice exporter = vk;
        return new TicketSources.Source("cuda", r -> mint(queues, exporter, r));
    }

    private static Ticket mint(CudaWorkQueue[] queues, ExportingVulkanDevice vk, Random r) {
        int kind = r.nextInt(vk != null ? 3 : 2);
        if (kind == 2) {
            return external(queues[0], vk);
        }
        CudaWorkQueue q = queues[1 + r.nextInt(STREAMS - 1)];
        synchronized (q) { // the kernel and its point in one piece on the stream
            q.launchSpin(1_000L << r.nextInt(12)); // 1 µs .. 2 ms
            SyncPoint p = kind == 0 ? q.recordEvent() : q.advanceTimeline();
            return TicketSources.selfSignalling(kind == 0 ? "cuda-event" : "cuda-timeline", p);
        }
    }

    /** A Vulkan timeline imported into CUDA; the stream of {@code q} waits on it (a stream of its own). */
    private static Ticket external(CudaWorkQueue q, ExportingVulkanDevice vk) {
        long semaphore = vk.createSemaphore(true, 0);
        CudaExternalSemaphore imported = CudaExternalSemaphore.importTimelineFd(vk.exportOpaqueFd(semaphore),
                q.context());
        SyncPoint.Cuda p;
        SyncPoint.CudaEvent after; // the ticket's own view: signalled once the stream has passed the wait
        synchronized (q) {
            p = imported.point(q.stream(), 1);
            after = q.recordEvent();
        }
        return new OwnedTicket("cuda-external-semaphore", p, p.waiter(), false) {
            @Override
            public boolean dependsOnOthers() {
                return true; // every external wait is on one stream: each passes only after the ones before it
            }

            @Override
            void doSignal() {
                vk.hostSignal(semaphore, 1);
            }

            @Override
            boolean landed() {
                return after.isSignaled();
            }

            @Override
            void release() {
                after.waiter().close();
                imported.close();
                // the exporting side goes only once CUDA has let go of its import (NVIDIA's vkDestroySemaphore of an
                // exported semaphore was seen not to return while the import lived and a wait in its context pended)
                imported.whenReleased().thenRunAsync(() -> vk.destroySemaphore(semaphore), RELEASES);
            }
        };
    }
}
