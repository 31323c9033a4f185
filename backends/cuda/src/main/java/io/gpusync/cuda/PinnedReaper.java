package io.gpusync.cuda;

import io.gpusync.internal.Housekeeping;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Returns to their {@link PinnedWordPool} the words of released {@link CudaHostTimeline}s that still had a
 * {@code cuStreamWriteValue64} in flight: reusing them at once would let that write land in another timeline, and
 * waiting for the GPU in a release action is forbidden. A sweep on gpusync's housekeeping thread checks each
 * buried word (one memory read; no driver call at all), rescheduling itself with a backoff of 1 → 16 ms while any
 * word is buried and not at all otherwise. A word whose write never lands (its context died) is given up after
 * {@link #GIVE_UP_NANOS} and never reused (8 bytes leak). Thread-safe; {@link #bury} never blocks.
 */
final class PinnedReaper {
    private static final System.Logger LOG = System.getLogger(PinnedReaper.class.getName());
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    static final long GIVE_UP_NANOS = TimeUnit.MINUTES.toNanos(10);
    private static final long FIRST_DELAY_NANOS = 1_000_000L;
    private static final long MAX_DELAY_NANOS = 16_000_000L;
    private final ConcurrentLinkedQueue<Grave> graves = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();

    private record Grave(MemorySegment word, PinnedWordPool pool, long finalValue, long since) {
    }

    PinnedReaper() {
    }

    void bury(MemorySegment word, PinnedWordPool pool, long finalValue) {
        graves.add(new Grave(word, pool, finalValue, System.nanoTime()));
        if (scheduled.compareAndSet(false, true)) {
            Housekeeping.schedule(() -> sweep(FIRST_DELAY_NANOS), FIRST_DELAY_NANOS, TimeUnit.NANOSECONDS);
        }
    }

    /** Words waiting to be returned (tests). */
    int buried() {
        return graves.size();
    }

    private void sweep(long delay) {
        for (Iterator<Grave> it = graves.iterator(); it.hasNext(); ) {
            Grave g = it.next();
            long v = (long) WORD.getAcquire(g.word(), 0L);
            if (Long.compareUnsigned(v, g.finalValue()) >= 0) {
                it.remove();
                g.pool().give(g.word());
            } else if (System.nanoTime() - g.since() > GIVE_UP_NANOS) {
                it.remove();
                LOG.log(System.Logger.Level.WARNING, "CUDA timeline word " + CudaDriver.hex(g.word())
                        + " never reached " + Long.toUnsignedString(g.finalValue()) + "; leaking it");
            }
        }
        if (graves.isEmpty()) {
            scheduled.set(false);
            if (graves.isEmpty() || !scheduled.compareAndSet(false, true)) {
                return; // a bury racing this check scheduled its own sweep, or there is nothing left
            }
            delay = FIRST_DELAY_NANOS / 2;
        }
        long next = Math.min(delay * 2, MAX_DELAY_NANOS);
        Housekeeping.schedule(() -> sweep(next), next, TimeUnit.NANOSECONDS);
    }
}
