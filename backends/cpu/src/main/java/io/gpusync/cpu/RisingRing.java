package io.gpusync.cpu;

/**
 * The registrations of a {@link CpuTimeline} whose values arrive in rising order — the common case: a producer
 * hands out 1, 2, 3… and waits register in that order — kept in a ring in registration order, which is then
 * also value order. Appending is O(1) (amortised), so is removing (the slot is cleared where it is; cleared
 * slots are skipped when the head is reached and squeezed out when the ring is full), and taking every
 * registration due at a value is O(due). A value lower than the newest one in the ring does not fit: the
 * timeline keeps those in its sorted map.
 *
 * <p>Not thread-safe: every method runs under the timeline's lock. A node is in the ring exactly when its
 * {@link CpuTimeline.PendingNode#slot} is not negative; its {@code next} field is free for the chain that
 * {@link #takeDue} returns.
 */
final class RisingRing {
    /** Capacity a drained ring shrinks back to (a burst of a million waits does not pin megabytes forever). */
    static final int INITIAL = 16;

    private CpuTimeline.PendingNode[] slots = new CpuTimeline.PendingNode[INITIAL];
    private int head;
    /** Slots in use from {@code head} on, cleared ones included. */
    private int span;
    /** Live nodes (uncleared slots). */
    private int live;
    /** The value of the newest node appended (meaningful while {@code span > 0}). */
    private long newest;

    /**
     * Appends {@code node} unless its value is lower (unsigned) than the newest one here.
     *
     * @return whether it was appended
     */
    boolean tryAppend(CpuTimeline.PendingNode node) {
        if (span > 0 && Long.compareUnsigned(node.target, newest) < 0) {
            return false;
        }
        if (span == slots.length) {
            compactOrGrow();
        }
        int slot = (head + span) & (slots.length - 1);
        slots[slot] = node;
        node.slot = slot;
        newest = node.target;
        span++;
        live++;
        return true;
    }

    /** Removes {@code node}, which must be in this ring: O(1), its slot is cleared where it is. */
    void remove(CpuTimeline.PendingNode node) {
        slots[node.slot] = null;
        node.slot = -1;
        live--;
        if (live == 0) {
            clear();
        }
    }

    /**
     * Takes every node whose value is at or below {@code value} (unsigned), oldest first.
     *
     * @return the first of them, linked through {@code next} (their {@code slot} is -1), or {@code null}
     */
    CpuTimeline.PendingNode takeDue(long value) {
        CpuTimeline.PendingNode first = null;
        CpuTimeline.PendingNode last = null;
        int mask = slots.length - 1;
        while (span > 0) {
            CpuTimeline.PendingNode n = slots[head];
            if (n != null) {
                if (Long.compareUnsigned(n.target, value) > 0) {
                    break;
                }
                slots[head] = null;
                n.slot = -1;
                n.next = null;
                if (last == null) {
                    first = n;
                } else {
                    last.next = n;
                }
                last = n;
                live--;
            }
            head = (head + 1) & mask;
            span--;
        }
        if (live == 0) {
            clear();
        }
        return first;
    }

    /** Takes every node, oldest first, linked as by {@link #takeDue}. */
    CpuTimeline.PendingNode takeAll() {
        return takeDue(-1L); // the largest unsigned value
    }

    /** Nodes in the ring. */
    int size() {
        return live;
    }

    /** Slots allocated (for tests: the ring shrinks back once drained). */
    int capacity() {
        return slots.length;
    }

    /** Empty: back to the initial capacity if it had grown. */
    private void clear() {
        if (slots.length > INITIAL) {
            slots = new CpuTimeline.PendingNode[INITIAL];
        } else {
            for (int i = 0; i < span; i++) {
                slots[(head + i) & (slots.length - 1)] = null;
            }
        }
        head = 0;
        span = 0;
        live = 0;
    }

    /** Full: squeeze out cleared slots (order kept); grow when that frees less than half. */
    private void compactOrGrow() {
        int mask = slots.length - 1;
        CpuTimeline.PendingNode[] to = live * 2 > slots.length ? new CpuTimeline.PendingNode[slots.length * 2] : slots;
        int out = 0;
        for (int i = 0; i < span; i++) {
            int from = (head + i) & mask;
            CpuTimeline.PendingNode n = slots[from];
            if (n != null) {
                int slot = to == slots ? (head + out) & mask : out;
                if (to == slots) {
                    slots[from] = null;
                }
                to[slot] = n;
                n.slot = slot;
                out++;
            }
        }
        if (to != slots) {
            slots = to;
            head = 0;
        }
        span = out;
    }
}
