package io.gpusync.benchmarks.subjects;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.vulkan.VulkanContext;

/**
 * Points on a Vulkan timeline semaphore (one semaphore per stream, values 1, 2, 3…) signalled <em>through the
 * driver's queue</em>: {@code signal()} submits an empty batch that signals the value
 * ({@link VulkanContext#signalOnQueue}, {@code vkQueueSubmit} with a timeline signal), as GPU work would at its
 * end — so the latency includes the submission and the driver's queue thread (lavapipe here), unlike
 * {@link VulkanTimelineSubject}'s host {@code vkSignalSemaphore}. The engine serves them by WAIT_SET. Shares
 * {@link VulkanTimelineSubject}'s device (one wait-set thread for both).
 */
public final class VulkanQueueSubject implements Subject {

    @Override
    public String name() {
        return "vulkan-queue";
    }

    @Override
    public String description() {
        return "Vulkan timeline semaphore points (one semaphore per stream, values 1, 2, 3…), queue-signalled "
                + "(an empty vkQueueSubmit signalling the value); the engine serves them by WAIT_SET";
    }

    @Override
    public String unavailableReason() {
        return VulkanTimelineSubject.unavailable();
    }

    @Override
    public Stream newStream() {
        return new QueueStream(VulkanTimelineSubject.context());
    }

    private static final class QueueStream implements Stream {
        private final VulkanContext ctx;
        private final SyncPoint.Vulkan origin;
        private long last;
        private long submittedUpTo;

        QueueStream(VulkanContext ctx) {
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
                    submitTo(value);
                }
            };
        }

        /**
         * Submits a queue signal of {@code value} if it is above what was submitted: the signal values of a
         * timeline's queue submissions must increase, so earlier points of the stream are covered by a later one.
         */
        private synchronized void submitTo(long value) {
            if (value > submittedUpTo) {
                ctx.signalOnQueue(origin.semaphore(), value);
                submittedUpTo = value;
            }
        }

        @Override
        public void signalAll() {
            submitTo(last);
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
