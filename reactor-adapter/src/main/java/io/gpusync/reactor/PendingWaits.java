package io.gpusync.reactor;

import java.util.ArrayList;
import java.util.List;

/**
 * The engine's waits started and not yet terminated, for {@link SyncEngine#pendingWaits()} and for
 * {@link SyncEngine#dispose()} — kept in striped intrusive lists (the links live in each wait, as {@link Listed}) instead of
 * one concurrent set: adding and removing are O(1) with no allocation and no hashing, under the lock of one stripe,
 * chosen by the adding thread, so that subscribing threads and the threads that complete waits (a signaller's burst)
 * rarely meet on one lock. A wait remembers its stripe, so removal from any thread finds it.
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
        private Listed prevLive;
        private Listed nextLive;
        private int stripe;
        private boolean listed;
    }

    /** Adds {@code wait}, which must not be in a registry yet. */
    void add(PendingWait wait) {
        Listed w = wait;
        int i = (int) (Thread.currentThread().threadId() * 0x9E3779B9L >>> 16) & (stripes.length - 1);
        Stripe s = stripes[i];
        synchronized (s) {
            w.stripe = i;
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
        Stripe s = stripes[w.stripe];
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
