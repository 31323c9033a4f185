package io.gpusync.d3d12;

import io.gpusync.test.d3d12.D3D12Device;
import io.gpusync.SyncPoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * vkd3d 1.2's lost update: its fence worker applies the pending queue Signals of a fence in the order it sees their
 * Vulkan fences complete, and a Signal sets the value, so of two Signals pending on one fence the lower one can land
 * last. Both tests queue Signals in batches of {@value #BATCH} (requests in flight), {@value #FENCES} in all, and wait
 * for each batch.
 */
class D3D12QueueSignalOrderTest {
    static final int FENCES = 20_000;
    static final int BATCH = 32;
    static final long BATCH_BOUND_NANOS = 5_000_000_000L;

    private D3D12Device device;
    private D3d12Native d3d12;

    @BeforeEach
    void open() {
        device = Vkd3d.device();
        d3d12 = D3d12Native.platform();
    }

    @AfterEach
    void close() {
        if (device != null) {
            device.close();
        }
    }

    @Test
    void queueSignalPointsNeverHaveTwoSignalsPendingOnOneFenceNorLoseAnUpdate() {
        Map<Long, Long> lastOnFence = new HashMap<>();
        int fences = 0;
        for (int done = 0; done < FENCES; done += BATCH) {
            List<SyncPoint.D3D12> batch = new ArrayList<>();
            for (int k = 0; k < BATCH; k++) {
                SyncPoint.D3D12 point = device.queueSignalPoint();
                Long previous = lastOnFence.put(point.fence().address(), point.value());
                if (previous == null) {
                    fences++;
                } else { // the fence had reached its previous Signal when this one was queued
                    assertThat(point.value()).isEqualTo(previous + 1);
                    assertThat(d3d12.completedValue(point.fence())).as("fence %s", point.fence())
                            .isGreaterThanOrEqualTo(previous);
                }
                batch.add(point);
            }
            long deadline = System.nanoTime() + BATCH_BOUND_NANOS;
            for (SyncPoint.D3D12 p : batch) {
                while (!p.isSignaled()) {
                    assertThat(System.nanoTime() - deadline)
                            .as("%s value %d: completed value stays %d", p.fence(), p.value(),
                                    d3d12.completedValue(p.fence()))
                            .isNegative();
                    Thread.onSpinWait();
                }
            }
            batch.forEach(p -> p.waiter().close());
        }
        System.out.println(FENCES + " queue Signals through queueSignalPoint on " + fences + " fences: none lost");
        assertThat(fences).as("fences are reused").isLessThan(FENCES / 4);
    }

    /**
     * The hazard itself, with two Signals queued back to back on each fence: where the driver has it, some fences stay
     * at the lower value. Skipped where none is seen (a driver without the hazard).
     */
    @Test
    void twoQueueSignalsPendingOnOneFenceCanLeaveItAtTheLowerValue() {
        int lost = 0;
        for (int done = 0; done < FENCES; done += BATCH) {
            MemorySegment[] fences = new MemorySegment[BATCH];
            for (int k = 0; k < BATCH; k++) {
                fences[k] = device.createFence(0);
            }
            for (int k = 0; k < BATCH; k++) {
                device.queueSignal(fences[k], 1);
                device.queueSignal(fences[k], 2);
            }
            MemorySegment after = device.createFence(0); // signalled after all of them on the in-order queue
            device.queueSignal(after, 1);
            long deadline = System.nanoTime() + BATCH_BOUND_NANOS;
            while (d3d12.completedValue(after) != 1 && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();
            }
            for (int k = 0; k < BATCH; k++) {
                long settle = System.nanoTime() + 50_000_000L; // the worker may still be applying the Signals
                while (d3d12.completedValue(fences[k]) != 2 && System.nanoTime() - settle < 0) {
                    Thread.onSpinWait();
                }
                if (d3d12.completedValue(fences[k]) != 2) {
                    lost++;
                }
                device.releaseFence(fences[k]);
            }
            device.releaseFence(after);
        }
        System.out.println("back-to-back queue Signals 1, 2 on " + FENCES + " fences: " + lost + " left at 1");
        Assumptions.assumeTrue(lost > 0, "no lost update in " + FENCES + " fences: this driver may not have the hazard");
    }
}
