package io.gpusync.benchmarks.subjects;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.test.vulkan.VulkanContext;


/**
 * Points on a Vulkan timeline semaphore (one semaphore per stream, values 1, 2, 3…); the engine serves them by
 * WAIT_SET (one {@code vkWaitSemaphores(WAIT_ANY)} thread per device). Two ways to signal, two subjects:
 * {@link #hostSignalled()} ({@code vkSignalSemaphore} from the host) and {@link #queueSignalled()} (an empty
 * {@code vkQueueSubmit} that signals the value, as GPU work would at its end — the latency then includes the
 * submission and the driver's queue thread). One device (lavapipe here: {@code VK_DRIVER_FILES} pins it) shared
 * by all streams of both, created on first use.
 */
public final class VulkanTimelineSubject implements Subject {
    /** How a value reaches the semaphore. */
    private enum Signal {
        HOST("vulkan-timeline", "host-signalled (vkSignalSemaphore)") {
            @Override
            void signal(VulkanContext ctx, long semaphore, long value) {
                ctx.device().hostSignal(semaphore, value);
            }
        },
        QUEUE("vulkan-queue", "queue-signalled (an empty vkQueueSubmit signalling the value)") {
            @Override
            void signal(VulkanContext ctx, long semaphore, long value) {
                ctx.signalOnQueue(semaphore, value);
            }
        };

        final String subjectName;
        final String how;

        Signal(String subjectName, String how) {
            this.subjectName = subjectName;
            this.how = how;
        }

        abstract void signal(VulkanContext ctx, long semaphore, long value);
    }

    private final Signal signal;

    private VulkanTimelineSubject(Signal signal) {
        this.signal = signal;
    }

    /** {@code vulkan-timeline}: values signalled from the host. */
    public static VulkanTimelineSubject hostSignalled() {
        return new VulkanTimelineSubject(Signal.HOST);
    }

    /** {@code vulkan-queue}: values signalled through the driver's queue. */
    public static VulkanTimelineSubject queueSignalled() {
        return new VulkanTimelineSubject(Signal.QUEUE);
    }

    private static VulkanContext context;
    private static String unavailable;

    /** The shared context: one device, one wait-set thread. */
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
        return signal.subjectName;
    }

    @Override
    public String description() {
        return "Vulkan timeline semaphore points (one semaphore per stream, values 1, 2, 3…), " + signal.how
                + "; the engine serves them by WAIT_SET";
    }

    @Override
    public Stream newStream() {
        return new SemaphoreStream(context(), signal);
    }

    private static final class SemaphoreStream implements Stream {
        private final VulkanContext ctx;
        private final Signal signal;
        private final SyncPoint.Vulkan origin;
        private long last;
        private long signalledUpTo;

        SemaphoreStream(VulkanContext ctx, Signal signal) {
            this.ctx = ctx;
            this.signal = signal;
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

        /**
         * Signals {@code value} if it is above what was signalled: a timeline's signals must increase (a lower
         * host signal loses the device on lavapipe), so earlier points are covered by a later one.
         */
        private synchronized void signalTo(long value) {
            if (value > signalledUpTo) {
                signal.signal(ctx, origin.semaphore(), value);
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
