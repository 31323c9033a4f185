package io.gpusync.vulkan;

import io.gpusync.bindings.vulkan.VkSubmitInfo;
import io.gpusync.bindings.vulkan.VkTimelineSemaphoreSubmitInfo;
import io.gpusync.bindings.vulkan.Vulkan;
import io.gpusync.internal.Housekeeping;
import io.gpusync.internal.NativeArrays;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * Holds the gpusync-owned semaphores and fences that a {@link VulkanDevice#submit} submission refers to until that
 * submission has completed: Vulkan forbids destroying a semaphore or fence that a pending batch refers
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
 * <p>Thread-safe. {@link #submit} runs under the caller's synchronisation of its queue. Whenever holds are pending the
 * device is alive (each owned handle holds it), which is what lets the sweep read the private semaphore.
 */
final class SubmissionHolds {
    private static final long FIRST_DELAY_NANOS = 1_000_000L;
    private static final long MAX_DELAY_NANOS = 16_000_000L;
    /** The size of one {@code VkSubmitInfo}. */
    static final long SUBMIT_INFO_BYTES = VkSubmitInfo.sizeof();

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

    /**
     * {@code vkQueueSubmit}, holding the owned handles among those the batches name (their wait and signal
     * semaphores, and {@code fence}) until an empty batch behind them has signalled the private timeline.
     */
    void submit(MemorySegment queue, int submitCount, MemorySegment submits, long fence) {
        String what = "vkQueueSubmit(" + submitCount + " batch(es), fence " + hex(fence) + ") on " + state;
        state.checkNotLost(what);
        List<DeviceState.Hold> holds = holdOwned(what, named(submitCount, submits, fence));
        try {
            state.check(state.fns.queueSubmit(queue, submitCount, submits, fence), what);
        } catch (RuntimeException | Error e) {
            holds.forEach(DeviceState.Hold::close); // nothing was submitted
            throw e;
        }
        if (!holds.isEmpty()) {
            retireAfter(queue, holds);
        }
    }

    /** The semaphores the batches wait on and signal, and the fence (0: none). */
    private static long[] named(int submitCount, MemorySegment submits, long fence) {
        List<Long> named = new ArrayList<>();
        named.add(fence);
        for (int i = 0; i < submitCount; i++) {
            MemorySegment info = VkSubmitInfo.asSlice(submits, i);
            for (long h : NativeArrays.longs(VkSubmitInfo.pWaitSemaphores(info), VkSubmitInfo.waitSemaphoreCount(info))) {
                named.add(h);
            }
            for (long h : NativeArrays.longs(VkSubmitInfo.pSignalSemaphores(info),
                    VkSubmitInfo.signalSemaphoreCount(info))) {
                named.add(h);
            }
        }
        return named.stream().mapToLong(Long::longValue).toArray();
    }

    /** Holds on the handles gpusync owns among {@code handles} (0: none), for the batch that uses them. */
    private List<DeviceState.Hold> holdOwned(String what, long... handles) {
        List<DeviceState.Hold> holds = new ArrayList<>(handles.length);
        try {
            for (long h : handles) {
                DeviceState.Hold hold = h == 0 ? null : state.holdIfOwned(h, what);
                if (hold != null) {
                    holds.add(hold);
                }
            }
        } catch (RuntimeException | Error e) {
            holds.forEach(DeviceState.Hold::close);
            throw e;
        }
        return holds;
    }

    /**
     * Submits the empty batch that tells when the batch just submitted is done, and leaves {@code holds} here until
     * then. If that submit fails the holds are kept for good: when the first batch is done cannot be known.
     */
    private void retireAfter(MemorySegment queue, List<DeviceState.Hold> holds) {
        long[] retirement = nextRetirement();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment info = VkSubmitInfo.allocate(arena);
            VkSubmitInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_SUBMIT_INFO());
            MemorySegment timeline = VkTimelineSemaphoreSubmitInfo.allocate(arena);
            VkTimelineSemaphoreSubmitInfo.sType(timeline, Vulkan.VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO());
            VkSubmitInfo.pNext(info, timeline);
            VkSubmitInfo.signalSemaphoreCount(info, 1);
            VkSubmitInfo.pSignalSemaphores(info, arena.allocateFrom(ValueLayout.JAVA_LONG, retirement[0]));
            VkTimelineSemaphoreSubmitInfo.signalSemaphoreValueCount(timeline, 1);
            VkTimelineSemaphoreSubmitInfo.pSignalSemaphoreValues(timeline,
                    arena.allocateFrom(ValueLayout.JAVA_LONG, retirement[1]));
            state.check(state.fns.queueSubmit(queue, 1, info, 0),
                    "vkQueueSubmit(retirement " + Long.toUnsignedString(retirement[1]) + ") on " + state);
        }
        retire(retirement[1], holds);
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
