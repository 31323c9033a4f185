package io.gpusync.cpu;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncException;
import io.gpusync.SoftwareTimeline;
import io.gpusync.SyncPoint;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A software timeline semaphore — gpusync's embedded default backend and the host-side model of a GPU
 * timeline: a monotonically increasing unsigned 64-bit counter that waits resolve against.
 *
 * <p>{@link #signal(long)} raises the value and completes every wait at or below it; a value at or below
 * the current one is a no-op (the value is the highest ever signalled, see {@link #signal}); {@link #fail(Throwable)} fails every pending and later wait, as a lost device would;
 * {@link #at(long)} mints a {@link SyncPoint.HostTimeline} whose waiter blocks by parking (never
 * spinning), probes in O(1), and can deliver completion through a callback with no thread waiting.
 *
 * <p><b>Threading.</b> Thread-safe. Registrations and signals take a short internal lock; completions run
 * on the thread that calls {@code signal}/{@code fail} (callbacks must only hand over — see
 * {@link io.gpusync.spi.SignalListener}), after the lock is released. A listener that throws harms no other
 * wait: every due registration is completed first, then {@code signal}/{@code fail} rethrows the first
 * exception (later ones attached as suppressed) to the signalling thread, the timeline's value already
 * raised. A registration costs one small node
 * (≈40 bytes) and O(1) time when values register in rising order (the usual case: a producer hands out 1, 2,
 * 3…), O(log d) otherwise, d being the number of distinct pending values registered out of order; cancelling
 * one is O(1), and a signal costs O(due).
 *
 * <p>Values are unsigned: {@code 0xFFFF_FFFF_FFFF_FFFFL} is the largest. The timeline starts at 0.
 */
public final class CpuTimeline implements SoftwareTimeline {
    private volatile long value;
    private volatile SyncException failure;
    /** Registrations in rising value order (the common case), see {@link RisingRing}. */
    private final RisingRing rising = new RisingRing();
    /** Registrations whose value was below the newest one in {@link #rising} when they came. */
    private final TreeMap<Long, PendingList> sorted = new TreeMap<>(Long::compareUnsigned);
    private int pendingCount;

    /** A timeline at value 0. */
    public CpuTimeline() {
        this(0);
    }

    /** A timeline at {@code initialValue} (unsigned). */
    public CpuTimeline(long initialValue) {
        this.value = initialValue;
    }

    /** The current value (unsigned). Never blocks. */
    @Override
    public long value() {
        return value;
    }

    /** The failure set by {@link #fail}, or {@code null}. */
    SyncException failure() {
        return failure;
    }

    /** Whether {@code target} (unsigned) has been reached; throws the failure if the timeline failed. */
    boolean reached(long target) {
        SyncException f = failure;
        if (f != null) {
            throw f;
        }
        return Long.compareUnsigned(value, target) >= 0;
    }

    /**
     * Raises the timeline to {@code newValue} (unsigned) and completes every wait at or below it, on this
     * thread. Signalling a value at or below the current one is a no-op: the timeline's value is the highest
     * value ever signalled. A timeline value means "everything up to here is done", so a late signal of an
     * earlier value tells nothing new; producers that signal from several threads may race, and the later
     * signal must not fail for it. (Vulkan refuses such a host signal; a GPU queue never makes one.) The
     * values one in-order queue signals rise in order: signal each value only once the work it stands for,
     * and all work before it, is done.
     *
     * @throws SyncException                 (the failure) if the timeline has failed
     * @throws RuntimeException              the first exception a listener threw, after every due wait was
     *                                       completed (the value is raised all the same)
     */
    @Override
    public void signal(long newValue) {
        PendingNode due;
        synchronized (this) {
            if (failure != null) {
                throw failure;
            }
            if (Long.compareUnsigned(newValue, value) <= 0) {
                return; // already reached: the value never goes down
            }
            value = newValue;
            if (pendingCount == 0) {
                return;
            }
            // rising registrations: O(due) off the ring's head, no allocation (a burst signals one by one)
            due = rising.takeDue(newValue);
            if (!sorted.isEmpty() && Long.compareUnsigned(sorted.firstKey(), newValue) <= 0) {
                due = appendSortedDue(due, newValue);
            }
            for (PendingNode n = due; n != null; n = n.next) {
                n.queued = false;
                pendingCount--;
            }
        }
        rethrow(fireChain(due, null));
    }

    /** Under the lock: moves the sorted map's registrations at or below {@code newValue} behind {@code due}. */
    private PendingNode appendSortedDue(PendingNode due, long newValue) {
        PendingNode last = due;
        while (last != null && last.next != null) {
            last = last.next;
        }
        Map<Long, PendingList> head = sorted.headMap(newValue, true);
        for (PendingList list : head.values()) {
            PendingNode n = list.head;
            list.head = null;
            list.size = 0;
            while (n != null) {
                PendingNode next = n.next;
                n.list = null;
                n.prev = null;
                n.next = null;
                if (last == null) {
                    due = n;
                } else {
                    last.next = n;
                }
                last = n;
                n = next;
            }
        }
        head.clear();
        return due;
    }

    private static void rethrow(Throwable thrown) {
        if (thrown instanceof RuntimeException re) {
            throw re;
        }
        if (thrown instanceof Error e) {
            throw e;
        }
    }

    /**
     * Fails every pending and later wait with {@code cause} (a {@link SyncException} propagates as it is;
     * anything else is wrapped in a {@link DeviceLostException}). Models device loss; irreversible. A
     * second call keeps the first failure. Like {@link #signal}, rethrows the first exception a listener
     * threw once every pending wait has been failed.
     */
    @Override
    public void fail(Throwable cause) {
        Objects.requireNonNull(cause, "cause");
        PendingNode due;
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failure = cause instanceof SyncException se ? se
                    : new DeviceLostException(BackendKind.CPU, "CpuTimeline failed: " + cause, cause);
            due = rising.takeAll();
            if (!sorted.isEmpty()) {
                due = appendSortedDue(due, -1L); // every value (the largest unsigned one)
            }
            for (PendingNode n = due; n != null; n = n.next) {
                n.queued = false;
            }
            pendingCount = 0;
        }
        rethrow(fireChain(due, failure));
    }

    /**
     * Completes every registration of the chain {@code due} (outside the lock), whatever some of them throw: a
     * listener's exception never strands the others. Returns the first one thrown, later ones added to it as
     * suppressed, or {@code null}.
     */
    private static Throwable fireChain(PendingNode due, SyncException error) {
        Throwable thrown = null;
        PendingNode n = due;
        while (n != null) {
            PendingNode next = n.next;
            n.next = null;
            try {
                n.fire(error);
            } catch (RuntimeException | Error e) {
                if (thrown == null) {
                    thrown = e;
                } else if (thrown != e) {
                    thrown.addSuppressed(e);
                }
            }
            n = next;
        }
        return thrown;
    }

    /** A point at {@code value} (unsigned) on this timeline, with a fresh waiter. */
    @Override
    public SyncPoint at(long value) {
        return new SyncPoint.HostTimeline(this, value, new CpuTimelineWaiter(this, value));
    }

    /** How many registrations (parked threads and callbacks) are pending now. */
    public synchronized int pendingWaits() {
        return pendingCount;
    }

    /**
     * Adds {@code node} unless its value is already reached or the timeline failed: O(1) for a value at or above
     * the newest one registered (the ring), O(log d) below it (the sorted map, d distinct values there).
     *
     * @return false if the caller must complete it itself (reached or failed)
     */
    synchronized boolean enqueue(PendingNode node) {
        if (failure != null || Long.compareUnsigned(value, node.target) >= 0) {
            return false;
        }
        if (!rising.tryAppend(node)) {
            sorted.computeIfAbsent(node.target, PendingList::new).add(node);
        }
        node.queued = true;
        pendingCount++;
        return true;
    }

    /** Removes {@code node} if still pending, in O(1). @return whether it was. */
    boolean dequeue(PendingNode node) {
        if (!node.queued) { // once fired or removed it never comes back: no lock needed to see that
            return false;
        }
        synchronized (this) {
            if (!node.queued) {
                return false;
            }
            node.queued = false;
            pendingCount--;
            PendingList list = node.list;
            if (list != null) {
                list.remove(node);
                if (list.size == 0) {
                    sorted.remove(list.target);
                }
            } else {
                rising.remove(node);
            }
            return true;
        }
    }

    @Override
    public String toString() {
        return "CpuTimeline@" + Integer.toHexString(System.identityHashCode(this)) + "[value="
                + Long.toUnsignedString(value) + (failure != null ? ", failed" : "") + "]";
    }

    /**
     * A registration waiting for a value: in the {@link RisingRing} ({@code slot} ≥ 0) or in a {@link PendingList}
     * of the sorted map ({@code list} set, an intrusive doubly-linked list node); {@code next} also links the
     * registrations a signal takes, for firing them outside the lock.
     */
    abstract static class PendingNode {
        final long target;
        PendingList list;
        PendingNode prev;
        PendingNode next;
        /** Its slot in the ring, -1 when not there. */
        int slot = -1;
        /**
         * Registered and neither fired nor removed; written under the timeline's lock, read without it by
         * {@link #dequeue}: only ever true → false after the registration was handed out, so a stale true only
         * sends the reader to the lock, and a false it reads is final (plain, not volatile: a burst's signal marks
         * every node it takes).
         */
        boolean queued;

        PendingNode(long target) {
            this.target = target;
        }

        /** Completes this registration: {@code error == null} means signalled. Runs outside the lock. */
        abstract void fire(SyncException error);
    }

    /** The registrations waiting for one value. */
    static final class PendingList {
        final long target;
        PendingNode head;
        int size;

        PendingList(long target) {
            this.target = target;
        }

        void add(PendingNode node) {
            node.list = this;
            node.next = head;
            if (head != null) {
                head.prev = node;
            }
            head = node;
            size++;
        }

        void remove(PendingNode node) {
            if (node.prev != null) {
                node.prev.next = node.next;
            } else {
                head = node.next;
            }
            if (node.next != null) {
                node.next.prev = node.prev;
            }
            node.prev = null;
            node.next = null;
            node.list = null;
            size--;
        }
    }
}
