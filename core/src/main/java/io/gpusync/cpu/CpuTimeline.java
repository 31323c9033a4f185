package io.gpusync.cpu;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SoftwareTimeline;
import io.gpusync.SyncPoint;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A software timeline semaphore — gpusync's embedded default backend and the host-side model of a GPU
 * timeline: a monotonically increasing unsigned 64-bit counter that waits resolve against.
 *
 * <p>{@link #signal(long)} raises the value (lowering it is an error) and completes every wait at or
 * below it; {@link #fail(Throwable)} fails every pending and later wait, as a lost device would;
 * {@link #at(long)} mints a {@link SyncPoint.HostTimeline} whose waiter blocks by parking (never
 * spinning), probes in O(1), and can deliver completion through a callback with no thread waiting.
 *
 * <p><b>Threading.</b> Thread-safe. Registrations and signals take a short internal lock; completions run
 * on the thread that calls {@code signal}/{@code fail} (callbacks must only hand over — see
 * {@link io.gpusync.spi.SignalListener}), after the lock is released. A listener that throws harms no other
 * wait: every due registration is completed first, then {@code signal}/{@code fail} rethrows the first
 * exception (later ones attached as suppressed) to the signalling thread, the timeline's value already
 * raised. A registration costs one small node
 * (≈40 bytes) and O(log d) time, d being the number of distinct pending values; cancelling one is O(1).
 *
 * <p>Values are unsigned: {@code 0xFFFF_FFFF_FFFF_FFFFL} is the largest. The timeline starts at 0.
 */
public final class CpuTimeline implements SoftwareTimeline {
    private volatile long value;
    private volatile SyncException failure;
    private final TreeMap<Long, PendingList> pending = new TreeMap<>(Long::compareUnsigned);
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
     * thread. Signalling the current value again is a no-op.
     *
     * @throws SyncInvalidArgumentException if {@code newValue} is lower than the current value
     * @throws SyncException                 (the failure) if the timeline has failed
     * @throws RuntimeException              the first exception a listener threw, after every due wait was
     *                                       completed (the value is raised all the same)
     */
    @Override
    public void signal(long newValue) {
        PendingList one;
        List<PendingList> due;
        synchronized (this) {
            if (failure != null) {
                throw failure;
            }
            if (Long.compareUnsigned(newValue, value) < 0) {
                throw new SyncInvalidArgumentException(BackendKind.CPU, "CpuTimeline cannot go backwards: "
                        + Long.toUnsignedString(value) + " → " + Long.toUnsignedString(newValue));
            }
            value = newValue;
            Map.Entry<Long, PendingList> first = pending.firstEntry();
            if (first == null || Long.compareUnsigned(first.getKey(), newValue) > 0) {
                return;
            }
            // the common case, a signal that completes one value: no view, no list (bursts signal one by one)
            pending.pollFirstEntry();
            one = first.getValue();
            pendingCount -= one.size;
            one.detach();
            Map<Long, PendingList> rest = pending.headMap(newValue, true);
            if (rest.isEmpty()) {
                due = null;
            } else {
                due = new ArrayList<>(rest.size() + 1);
                due.add(one);
                due.addAll(rest.values());
                rest.clear();
                for (int i = 1; i < due.size(); i++) {
                    PendingList list = due.get(i);
                    pendingCount -= list.size;
                    list.detach();
                }
            }
        }
        if (due == null) {
            Throwable thrown = one.fireAll(null, null);
            rethrow(thrown);
            return;
        }
        fireAll(due, null);
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
        List<PendingList> due;
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failure = cause instanceof SyncException se ? se
                    : new DeviceLostException(BackendKind.CPU, "CpuTimeline failed: " + cause, cause);
            due = new ArrayList<>(pending.values());
            pending.clear();
            pendingCount = 0;
            due.forEach(PendingList::detach);
        }
        fireAll(due, failure);
    }

    /**
     * Completes every registration of {@code due}, whatever some of them throw: a listener's exception never
     * strands the others. The first one is rethrown once all have run, later ones added to it as suppressed.
     */
    private static void fireAll(List<PendingList> due, SyncException error) {
        Throwable thrown = null;
        for (PendingList list : due) {
            thrown = list.fireAll(error, thrown);
        }
        if (thrown instanceof RuntimeException re) {
            throw re;
        }
        if (thrown instanceof Error e) {
            throw e;
        }
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
     * Adds {@code node} unless its value is already reached or the timeline failed.
     *
     * @return false if the caller must complete it itself (reached or failed)
     */
    synchronized boolean enqueue(PendingNode node) {
        if (failure != null || Long.compareUnsigned(value, node.target) >= 0) {
            return false;
        }
        PendingList list = pending.computeIfAbsent(node.target, PendingList::new);
        list.add(node);
        pendingCount++;
        return true;
    }

    /** Removes {@code node} if still pending. @return whether it was. */
    synchronized boolean dequeue(PendingNode node) {
        PendingList list = node.list;
        if (list == null) {
            return false;
        }
        list.remove(node);
        pendingCount--;
        if (list.size == 0) {
            pending.remove(list.target);
        }
        return true;
    }

    @Override
    public String toString() {
        return "CpuTimeline@" + Integer.toHexString(System.identityHashCode(this)) + "[value="
                + Long.toUnsignedString(value) + (failure != null ? ", failed" : "") + "]";
    }

    /** A registration waiting for a value: an intrusive doubly-linked list node. */
    abstract static class PendingNode {
        final long target;
        PendingList list;
        PendingNode prev;
        PendingNode next;

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

        /** Marks every node as no longer queued (under the timeline's lock). */
        void detach() {
            for (PendingNode n = head; n != null; n = n.next) {
                n.list = null;
            }
        }

        /** Fires every node; returns {@code thrown} with whatever they threw added (first wins, others suppressed). */
        Throwable fireAll(SyncException error, Throwable thrown) {
            PendingNode n = head;
            head = null;
            while (n != null) {
                PendingNode next = n.next;
                n.prev = null;
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
    }
}
