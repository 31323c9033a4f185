package io.gpusync.vulkan;

import io.gpusync.internal.Housekeeping;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Holds the gpusync-owned semaphores and fences that a {@link VulkanProducers.VulkanContext} submission refers to
 * until that submission has completed: Vulkan forbids destroying a semaphore or fence that a pending batch refers
 * to, and a waiter's close may drop the last hold on one at any time (lavapipe's queue thread would then signal
 * freed memory).
 *
 * <p><b>How completion is seen.</b> After a batch that uses owned handles, an empty batch on the same queue
 * signals a private timeline semaphore to the next value {@code n}: a semaphore signal operation of
 * {@code vkQueueSubmit} happens after every semaphore and fence signal operation earlier in submission order, so
 * once the counter reaches {@code n} every batch up to that one has signalled what it refers to. The holds of
 * batches at or below the counter are then dropped, by the next submission or by a sweep on gpusync's housekeeping
 * thread ({@code vkGetSemaphoreCounterValue}, backing off from 1 to 16 ms) that runs only while holds are pending.
 * A batch that never completes (it waits on a value nobody signals) keeps its handles, and so the device, alive:
 * a leak, never a use after free. On a lost device the holds are dropped (nothing runs any more).
 *
 * <p>Thread-safe. Submissions call {@link #retire} under the context's queue lock. Whenever holds are pending the
 * device is alive (each owned handle holds it), which is what lets the sweep read the private semaphore.
 */
final class SubmissionHolds {
    private static final long FIRST_DELAY_NANOS = 1_000_000L;
    private static final long MAX_DELAY_NANOS = 16_000_000L;

    private final DeviceState state;
    private final ArrayDeque<Batch> pending = new ArrayDeque<>(); // guarded by this, in submission order
    private long semaphore;     // guarded by this; the private timeline, 0 until first needed
    private long submitted;     // guarded by this: the last value a retirement batch signals
    private boolean scheduled;  // guarded by this

    private record Batch(long value, List<DeviceState.Hold> holds) {
    }

    SubmissionHolds(DeviceState state) {
        this.state = state;
    }

    /**
     * The private timeline semaphore and the value that the retirement batch after {@code holds}' batch must
     * signal; the caller submits that batch, then calls {@link #retire}.
     */
    synchronized long[] nextRetirement() {
        if (semaphore == 0) {
            semaphore = state.fns.createSemaphore(true, 0);
        }
        return new long[]{semaphore, submitted + 1};
    }

    /** The retirement batch for {@code value} was submitted: {@code holds} are dropped once it has run. */
    void retire(long value, List<DeviceState.Hold> holds) {
        synchronized (this) {
            submitted = value;
            pending.add(new Batch(value, holds));
        }
        sweep(FIRST_DELAY_NANOS);
    }

    /** Pending batches (tests). */
    synchronized int pending() {
        return pending.size();
    }

    private void sweep(long delay) {
        List<DeviceState.Hold> done = new java.util.ArrayList<>();
        boolean again;
        synchronized (this) {
            if (!pending.isEmpty()) {
                long[] out = new long[1];
                int r = state.fns.counterValue(semaphore, out);
                boolean lost = r == VkResults.DEVICE_LOST || state.isLost();
                while (!pending.isEmpty()
                        && (lost || (r == VkResults.SUCCESS && Long.compareUnsigned(pending.peek().value(), out[0]) <= 0))) {
                    done.addAll(pending.poll().holds());
                }
            }
            again = !pending.isEmpty() && !scheduled;
            if (again) {
                scheduled = true;
            }
        }
        if (again) {
            long next = Math.min(delay * 2, MAX_DELAY_NANOS);
            Housekeeping.schedule(() -> {
                synchronized (this) {
                    scheduled = false;
                }
                sweep(next);
            }, delay, TimeUnit.NANOSECONDS);
        }
        for (DeviceState.Hold h : done) { // last: a release may destroy the device (and this semaphore) inline
            h.close();
        }
    }

    /** Destroys the private semaphore; the device is idle and about to be destroyed. */
    synchronized void destroy() {
        if (semaphore != 0) {
            state.fns.destroySemaphore(semaphore);
            semaphore = 0;
        }
    }
}
