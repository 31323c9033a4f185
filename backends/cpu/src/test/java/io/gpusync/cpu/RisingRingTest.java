package io.gpusync.cpu;

import io.gpusync.SyncException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ring of rising registrations: values at or above the newest one are appended in order, a lower value is
 * refused (the timeline's sorted map takes it), a removed node is never handed out, and what a signal takes is
 * exactly the nodes at or below its value, oldest first — across wrap-around, compaction, growth and shrinking.
 */
class RisingRingTest {

    private static final class Node extends CpuTimeline.PendingNode {
        Node(long target) {
            super(target);
        }

        @Override
        void fire(SyncException error) {
        }
    }

    private static List<Long> targets(CpuTimeline.PendingNode chain) {
        List<Long> out = new ArrayList<>();
        for (CpuTimeline.PendingNode n = chain; n != null; n = n.next) {
            out.add(n.target);
            assertThat(n.slot).as("a taken node has left the ring").isEqualTo(-1);
        }
        return out;
    }

    @Test
    void risingAndEqualValuesAreAppendedAndALowerValueIsRefused() {
        RisingRing ring = new RisingRing();
        assertThat(ring.tryAppend(new Node(5))).isTrue();
        assertThat(ring.tryAppend(new Node(5))).isTrue();
        assertThat(ring.tryAppend(new Node(7))).isTrue();
        Node low = new Node(6);
        assertThat(ring.tryAppend(low)).isFalse();
        assertThat(low.slot).isEqualTo(-1);
        assertThat(ring.size()).isEqualTo(3);
    }

    @Test
    void valuesCompareUnsigned() {
        RisingRing ring = new RisingRing();
        assertThat(ring.tryAppend(new Node(Long.MAX_VALUE))).isTrue();
        assertThat(ring.tryAppend(new Node(-2L))).as("0xFFFF…FE is above Long.MAX_VALUE unsigned").isTrue();
        assertThat(ring.tryAppend(new Node(1))).isFalse();
        assertThat(targets(ring.takeDue(Long.MAX_VALUE))).containsExactly(Long.MAX_VALUE);
        assertThat(targets(ring.takeAll())).containsExactly(-2L);
    }

    @Test
    void aSignalTakesExactlyTheDueNodesOldestFirst() {
        RisingRing ring = new RisingRing();
        for (long v = 1; v <= 10; v++) {
            ring.tryAppend(new Node(v));
        }
        assertThat(ring.takeDue(0)).isNull();
        assertThat(targets(ring.takeDue(3))).containsExactly(1L, 2L, 3L);
        assertThat(targets(ring.takeDue(3))).isEmpty();
        assertThat(targets(ring.takeDue(4))).containsExactly(4L);
        assertThat(ring.size()).isEqualTo(6);
        assertThat(targets(ring.takeAll())).containsExactly(5L, 6L, 7L, 8L, 9L, 10L);
        assertThat(ring.size()).isZero();
    }

    @Test
    void aRemovedNodeIsNeverTakenAndTheOthersKeepTheirOrder() {
        RisingRing ring = new RisingRing();
        List<Node> nodes = new ArrayList<>();
        for (long v = 1; v <= 8; v++) {
            Node n = new Node(v);
            nodes.add(n);
            ring.tryAppend(n);
        }
        ring.remove(nodes.get(0));
        ring.remove(nodes.get(3));
        ring.remove(nodes.get(7));
        assertThat(nodes.get(3).slot).isEqualTo(-1);
        assertThat(ring.size()).isEqualTo(5);
        assertThat(targets(ring.takeDue(5))).containsExactly(2L, 3L, 5L);
        assertThat(targets(ring.takeAll())).containsExactly(6L, 7L);
    }

    @Test
    void compactionAndGrowthKeepOrderAndSlotsAcrossWrapAround() {
        RisingRing ring = new RisingRing();
        long v = 0;
        for (int i = 0; i < 10; i++) { // moves the head off slot 0, so that later spans wrap around
            ring.tryAppend(new Node(++v));
        }
        ring.takeDue(v);
        List<Node> kept = new ArrayList<>();
        List<Node> removedLater = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            Node n = new Node(++v);
            ring.tryAppend(n);
            switch (i % 3) {
                case 0 -> kept.add(n);
                case 1 -> ring.remove(n); // cleared at once: squeezed out when the ring fills
                default -> removedLater.add(n);
            }
        }
        removedLater.forEach(ring::remove); // through slots that compactions and growths have moved
        assertThat(kept).allSatisfy(n -> assertThat(n.slot).isNotNegative());
        assertThat(ring.size()).isEqualTo(kept.size());
        assertThat(targets(ring.takeAll())).containsExactlyElementsOf(kept.stream().map(n -> n.target).toList());
    }

    @Test
    void removalsInterleavedWithAppendsSqueezeOutClearedSlotsWithoutGrowing() {
        RisingRing ring = new RisingRing();
        Node keep = new Node(0);
        ring.tryAppend(keep);
        // one live node and a steady stream of appended-then-removed ones: cleared slots are reused, no growth
        for (long v = 1; v <= 10_000; v++) {
            Node n = new Node(v);
            ring.tryAppend(n);
            ring.remove(n);
        }
        assertThat(ring.capacity()).isEqualTo(RisingRing.INITIAL);
        assertThat(ring.size()).isEqualTo(1);
        assertThat(targets(ring.takeAll())).containsExactly(0L);
    }

    @Test
    void aDrainedRingShrinksBackToItsInitialCapacity() {
        RisingRing ring = new RisingRing();
        List<Node> nodes = new ArrayList<>();
        for (long v = 1; v <= 5_000; v++) {
            Node n = new Node(v);
            nodes.add(n);
            ring.tryAppend(n);
        }
        assertThat(ring.capacity()).isGreaterThanOrEqualTo(5_000);
        assertThat(targets(ring.takeDue(4_000))).hasSize(4_000);
        nodes.subList(4_000, 5_000).forEach(ring::remove);
        assertThat(ring.size()).isZero();
        assertThat(ring.capacity()).isEqualTo(RisingRing.INITIAL);
        assertThat(ring.tryAppend(new Node(1))).as("an empty ring takes any value").isTrue();
    }
}
