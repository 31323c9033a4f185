package io.gpusync.benchmarks.subjects;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.vulkan.VulkanContext;


/**
 * Points on a Vulkan timeline semaphore (one semaphore per stream, values 1, 2, 3…), host-signalled with
 * {@code vkSignalSemaphore}; the engine serves them by WAIT_SET (one {@code vkWaitSemaphores(WAIT_ANY)}
 * thread per device). One device (lavapipe here: {@code VK_DRIVER_FILES} pins it) shared by all streams,
 * created on first use.
 */
public final class VulkanTimelineSubject implements Subject {
    private static VulkanContext context;
    private static String unavailable;

    /** The shared context (also {@link VulkanQueueSubject}'s: one device, one wait-set thread). */
    static synchronized VulkanContext context() {
        if (context == null) {
            context = VulkanContext.create();
        }
        return context;
    }

    /** Why there is no Vulkan context here, or {@code null}; tries once. */
    static synchronized String unavailable() {
        if (context == null && unavailable == null) {
            try {
                context();
            } catch (RuntimeException | LinkageError e) {
                unavailable = "no Vulkan device with timeline semaphores here: " + e.getMessage();
            }
        }
        return context != null ? null : unavailable;
    }

    @Override
    public String unavailableReason() {
        return unavailable();
    }

    @Override
    public String name() {
        return "vulkan-timeline";
    }

    @Override
    public String description() {
        return "Vulkan timeline semaphore points (one semaphore per stream, values 1, 2, 3…), host-signalled "
                + "(vkSignalSemaphore); the engine serves them by WAIT_SET";
    }

    @Override
    public Stream newStream() {
        return new SemaphoreStream(context());
    }

    private static final class SemaphoreStream implements Stream {
        private final VulkanContext ctx;
        private final SyncPoint.Vulkan origin;
        private long last;
        private long signalledUpTo;

        SemaphoreStream(VulkanContext ctx) {
            this.ctx = ctx;
            this.origin = ctx.device().createTimelineSemaphore(0);
        }

        @Override
        public Point next() {
            long value;
            SyncWaiter waiter;
            synchronized (this) {
                value = ++last;
                waiter = origin.withValue(value).waiter(); // released by its Cleaner once unreachable
            }
            return new Point() {
                @Override
                public SyncWaiter waiter() {
                    return waiter;
                }

                @Override
                public void signal() {
                    signalTo(value);
                }
            };
        }

        /** Host-signals {@code value} if it is above what was signalled (a lower value would lose the device). */
        private synchronized void signalTo(long value) {
            if (value > signalledUpTo) {
                ctx.device().hostSignal(origin.semaphore(), value);
                signalledUpTo = value;
            }
        }

        @Override
        public void signalAll() {
            signalTo(last);
        }

        @Override
        public long registrations() {
            return -1;
        }

        @Override
        public synchronized void close() {
            origin.waiter().close(); // the semaphore goes once the rebound waiters are unreachable too
        }
    }
}
