package io.gpusync.cuda;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Returns to their {@link PinnedWordPool} the words of released {@link CudaHostTimeline}s that still had a
 * {@code cuStreamWriteValue64} in flight: reusing them at once would let that write land in another timeline, and
 * waiting for the GPU in a release action is forbidden. One daemon thread, started on first use, checks each
 * buried word (one memory read; no driver call at all) with a backoff of 1 → 16 ms while any is buried and parks
 * otherwise. A word whose write never lands (its context died) is given up after {@link #GIVE_UP_NANOS} and never
 * reused (8 bytes leak).
 */
final class PinnedReaper {
    private static final System.Logger LOG = System.getLogger(PinnedReaper.class.getName());
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    static final long GIVE_UP_NANOS = TimeUnit.MINUTES.toNanos(10);
    private static final ConcurrentLinkedQueue<Grave> GRAVES = new ConcurrentLinkedQueue<>();
    private static volatile Thread thread;

    private record Grave(MemorySegment word, PinnedWordPool pool, long finalValue, long since) {
    }

    private PinnedReaper() {
    }

    static void bury(MemorySegment word, PinnedWordPool pool, long finalValue) {
        GRAVES.add(new Grave(word, pool, finalValue, System.nanoTime()));
        Thread t = thread;
        if (t == null) {
            synchronized (PinnedReaper.class) {
                t = thread;
                if (t == null) {
                    t = new Thread(PinnedReaper::run, "gpusync-cuda-pinned-reaper");
                    t.setDaemon(true);
                    thread = t;
                    t.start();
                    return;
                }
            }
        }
        LockSupport.unpark(t);
    }

    /** Words waiting to be freed (tests). */
    static int buried() {
        return GRAVES.size();
    }

    private static void run() {
        long sleep = 1_000_000L;
        while (true) {
            if (GRAVES.isEmpty()) {
                LockSupport.park(PinnedReaper.class);
                sleep = 1_000_000L;
                continue;
            }
            for (Iterator<Grave> it = GRAVES.iterator(); it.hasNext(); ) {
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
            LockSupport.parkNanos(PinnedReaper.class, sleep);
            sleep = Math.min(sleep * 2, 16_000_000L);
        }
    }
}
