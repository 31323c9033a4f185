package io.gpusync.opencl;

import io.gpusync.SyncPoint;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * {@link SyncPoint.OpenCl} points over OpenCL binary semaphores ({@code cl_semaphore_khr}, extension
 * {@code cl_khr_semaphore}); their waiter is an {@code OpenClSemaphoreWaiter}, which waits by enqueuing
 * {@code clEnqueueWaitSemaphoresKHR} on a queue of the caller's and awaiting that command's {@code cl_event}.
 *
 * <p><b>Where it works.</b> The extension's functions are resolved per platform with
 * {@code clGetExtensionFunctionAddressForPlatform}. A device that does not list {@code cl_khr_semaphore}
 * (PoCL 3.1 does not) makes every factory throw {@link io.gpusync.SyncNotSupportedException} naming the
 * extension; so does a missing {@code libOpenCL.so.1}. Handles are checked as in {@link OpenClEvents}
 * ({@code null} → NPE; NULL → {@link io.gpusync.SyncInvalidArgumentException}).
 *
 * <p>The semaphore is <em>borrowed</em>: gpusync takes a reference of its own ({@code clRetainSemaphoreKHR})
 * and releases it when the point's waiter is closed; the caller keeps and releases its own. Thread-safe;
 * enqueues on the caller's queue (OpenCL queues are thread-safe).
 */
public final class OpenClSemaphores {
    private OpenClSemaphores() {
    }

    /**
     * A point signalled once {@code semaphore} has been signalled and consumed by a wait enqueued now on
     * {@code queue} (flushed). On an in-order queue, commands enqueued after it also wait for the signal.
     *
     * @throws io.gpusync.SyncNotSupportedException if the queue's device lacks {@code cl_khr_semaphore}
     */
    public static SyncPoint.OpenCl waitOn(MemorySegment queue, MemorySegment semaphore) {
        Cl.require();
        MemorySegment q = Cl.handle(queue, "cl_command_queue");
        MemorySegment s = Cl.handle(semaphore, "cl_semaphore_khr");
        ClSemaphoreKhr khr = ClSemaphoreKhr.forDevice(ClSemaphoreKhr.queueDevice(q));
        String what = "cl_semaphore_khr " + Cl.hex(s);
        ClErrors.check(ClSemaphoreKhr.invokeInt(khr.retain, s), "clRetainSemaphoreKHR", what);
        NativeAnchor anchor = NativeAnchor.adopt(what, () -> ClSemaphoreKhr.invokeInt(khr.release, s));
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ValueLayout.ADDRESS);
            int rc = ClSemaphoreKhr.enqueue(khr.waitFor, q, s, out);
            if (rc != 0) {
                ClSemaphoreKhr.invokeInt(khr.release, s);
                ClErrors.check(rc, "clEnqueueWaitSemaphoresKHR", what);
            }
            SyncPoint.OpenCl waitCommand = OpenClEvents.adopt(out.get(ValueLayout.ADDRESS, 0));
            OpenClSemaphoreWaiter waiter = new OpenClSemaphoreWaiter(s, anchor,
                    (OpenClEventWaiter) waitCommand.waiter());
            ClErrors.check(io.gpusync.bindings.opencl.OpenCl.clFlush(q), "clFlush", what);
            return new SyncPoint.OpenCl(s, waiter);
        }
    }

    /** A new binary semaphore in {@code context} of {@code device} (the caller releases it with {@link #release}). */
    static MemorySegment createBinary(MemorySegment device, MemorySegment context) {
        return ClSemaphoreKhr.forDevice(device).createBinary(context);
    }

    /** Enqueues {@code clEnqueueSignalSemaphoresKHR(queue, semaphore)} and flushes. */
    static void signal(MemorySegment queue, MemorySegment semaphore) {
        ClSemaphoreKhr khr = ClSemaphoreKhr.forDevice(ClSemaphoreKhr.queueDevice(queue));
        ClErrors.check(ClSemaphoreKhr.enqueue(khr.signal, queue, semaphore, MemorySegment.NULL),
                "clEnqueueSignalSemaphoresKHR", "cl_semaphore_khr " + Cl.hex(semaphore));
        ClErrors.check(io.gpusync.bindings.opencl.OpenCl.clFlush(queue), "clFlush", "signal queue");
    }

    /** Drops one reference to {@code semaphore}. */
    static void release(MemorySegment device, MemorySegment semaphore) {
        ClSemaphoreKhr khr = ClSemaphoreKhr.forDevice(device);
        ClErrors.check(ClSemaphoreKhr.invokeInt(khr.release, semaphore), "clReleaseSemaphoreKHR", "semaphore");
    }
}
