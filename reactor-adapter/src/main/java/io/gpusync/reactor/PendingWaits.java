package io.gpusync.reactor;

import java.util.ArrayList;
import java.util.List;

/**
 * The engine's waits started and not yet terminated, for {@link SyncEngine#pendingWaits()} and for
 * {@link SyncEngine#dispose()} — kept in striped intrusive lists (the links live in each wait, as {@link Listed}) instead of
 * one concurrent set: adding and removing are O(1) with no allocation and no hashing, under the lock of one stripe,
 * chosen by the thread that made the wait (the subscribing thread), so that subscribing threads and the threads that
 * complete waits (a signaller's burst) rarely meet on one lock. The choice is final in the wait, so a remove on
 * another thread, even one racing the add, locks the same stripe and sees the add whole or not at all.
 *
 * <p><b>Threading.</b> Thread-safe; each operation holds one stripe's lock for a few field writes (never while
 * calling out). {@link #size()} reads every stripe's count without locking: exact once the engine is quiet,
 * approximate while waits come and go.
 */
final class PendingWaits {
    private final Stripe[] stripes;

    PendingWaits() {
        this(Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors()) * 4 - 1) << 1);
    }

    /** @param stripes a power of two */
    PendingWaits(int stripes) {
        if (Integer.bitCount(stripes) != 1) {
            throw new IllegalArgumentException("stripes must be a power of two: " + stripes);
        }
        this.stripes = new Stripe[stripes];
        for (int i = 0; i < stripes; i++) {
            this.stripes[i] = new Stripe();
        }
    }

    /**
     * A wait's place in the registry: its links and stripe, which only the registry reads and writes (under the
     * stripe's lock). {@link PendingWait} extends it, so listing a wait allocates nothing.
     */
    abstract static class Listed {
        /** Picks the stripe (masked by the registry's size): fixed when the wait is made, on its subscribing thread. */
        private final int stripeSeed = (int) (Thread.currentThread().threadId() * 0x9E3779B9L >>> 16);
        private Listed prevLive;
        private Listed nextLive;
        private boolean listed;
    }

    /** Adds {@code wait}, which must not be in a registry yet. */
    void add(PendingWait wait) {
        Listed w = wait;
        Stripe s = stripeOf(w);
        synchronized (s) {
            w.nextLive = s.head;
            if (s.head != null) {
                s.head.prevLive = w;
            }
            s.head = w;
            s.count++;
            w.listed = true;
        }
    }

    /** Removes {@code wait} if it is here (a second call does nothing). */
    void remove(PendingWait wait) {
        Listed w = wait;
        Stripe s = stripeOf(w);
        synchronized (s) {
            if (!w.listed) {
                return;
            }
            w.listed = false;
            Listed prev = w.prevLive;
            Listed next = w.nextLive;
            if (prev != null) {
                prev.nextLive = next;
            } else {
                s.head = next;
            }
            if (next != null) {
                next.prevLive = prev;
            }
            w.prevLive = null;
            w.nextLive = null;
            s.count--;
        }
    }

    private Stripe stripeOf(Listed w) {
        return stripes[w.stripeSeed & (stripes.length - 1)];
    }

    /** Waits here now (see the class comment). */
    int size() {
        long sum = 0;
        for (Stripe s : stripes) {
            sum += s.count;
        }
        return (int) Math.min(Integer.MAX_VALUE, sum);
    }

    /** A copy of the waits here now (each stripe read under its lock; for dispose and tests). */
    List<PendingWait> snapshot() {
        List<PendingWait> all = new ArrayList<>();
        for (Stripe s : stripes) {
            synchronized (s) {
                for (Listed w = s.head; w != null; w = w.nextLive) {
                    all.add((PendingWait) w);
                }
            }
        }
        return all;
    }

    int stripes() {
        return stripes.length;
    }

    private static final class Stripe {
        Listed head;
        volatile int count;
    }
}
