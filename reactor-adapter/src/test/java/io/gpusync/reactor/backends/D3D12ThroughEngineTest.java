package io.gpusync.reactor.backends;

import io.gpusync.DeviceLostException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.bindings.d3d12.D3d12Shim;
import io.gpusync.d3d12.D3D12Fences;
import io.gpusync.test.d3d12.D3D12Device;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * D3D12 fences (vkd3d on lavapipe here) through the engine: a fence point's eventfd is watched by the epoll loop
 * (no thread waits), completes on a host or queue {@code Signal}, times out, frees everything on cancel, and fails
 * with {@link DeviceLostException} — not a completion — when the fence jumps to {@code UINT64_MAX}.
 */
class D3D12ThroughEngineTest {
    private static D3D12Device d3d12;
    private static SyncEngine engine;

    @BeforeAll
    static void open() {
        try {
            d3d12 = D3D12Device.open();
        } catch (SyncNotSupportedException absent) {
            System.out.println("[skipped] " + absent.getMessage());
            assumeTrue(false, absent.getMessage());
        }
        engine = GpuSync.builder().name("d3d12").build();
    }

    @AfterAll
    static void close() {
        if (engine != null) {
            engine.dispose();
        }
        if (d3d12 != null) {
            d3d12.close();
        }
    }

    @Test
    void aHostSignalCompletesTheMonoOnTheEpollPath() {
        SyncPoint.D3D12 point = D3D12Fences.adopt(d3d12.createFence(0), 1);
        assertThat(engine.pathFor(point.waiter())).isEqualTo(WaitPath.EPOLL);
        StepVerifier.create(engine.await(point, Duration.ofSeconds(10)))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(20))
                .then(() -> d3d12.signal(point.fence(), 1))
                .verifyComplete();
        assertThat(engine.pendingWaits()).isZero();
        point.waiter().close();
    }

    @Test
    void aQueueSignalCompletesTheMono() {
        SyncPoint.D3D12 point = D3D12Fences.adopt(d3d12.createFence(0), 3);
        StepVerifier.create(engine.await(point, Duration.ofSeconds(10)))
                .expectSubscription()
                .then(() -> d3d12.queueSignal(point.fence(), 3))
                .verifyComplete();
        point.waiter().close();
    }

    @Test
    void manyWaitsOnValuesOfOneFenceCompleteAsTheFenceAdvances() {
        SyncPoint.D3D12 base = D3D12Fences.adopt(d3d12.createFence(0), 1);
        var all = Flux.range(1, 100)
                .flatMap(i -> engine.await(base.withValue(1 + i % 4), Duration.ofSeconds(30)), 100)
                .then();
        StepVerifier.create(all)
                .expectSubscription()
                .then(() -> {
                    for (long v = 1; v <= 4; v++) { // one Signal pending at a time: vkd3d 1.2 may reorder two
                        d3d12.queueSignal(base.fence(), v);
                        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                        while (D3d12Shim.fenceCompletedValue(base.fence()) < v) {
                            assertThat(System.nanoTime() - deadline).as("fence reaches %d", v).isNegative();
                            Thread.onSpinWait();
                        }
                    }
                })
                .verifyComplete();
        assertThat(engine.pendingWaits()).isZero();
        base.waiter().close();
    }

    @Test
    void anUnreachedValueTimesOut() {
        SyncPoint.D3D12 point = D3D12Fences.adopt(d3d12.createFence(0), 1);
        StepVerifier.create(engine.await(point, Duration.ofMillis(50)))
                .expectError(SyncTimeoutException.class)
                .verify(Duration.ofSeconds(10));
        point.waiter().close();
    }

    @Test
    void aCancelledWaitIsFreedAndTheAdoptedFenceIsReleasedOnceItsWaiterCloses() throws Exception {
        MemorySegment fence = d3d12.createFence(0);
        D3d12Shim.addRef(fence); // the test's own reference, to watch the count
        SyncPoint.D3D12 point = D3D12Fences.adopt(fence, 1);
        Disposable d = engine.await(point, SyncPoint.FOREVER).subscribe();
        d.dispose();
        assertThat(engine.pendingWaits()).isZero();
        point.waiter().close();
        long deadline = System.nanoTime() + 5_000_000_000L; // the watch leaves on the loop, then the lease drops
        while (refCount(fence) != 1 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(refCount(fence)).as("gpusync's reference released, once").isEqualTo(1);
        d3d12.signal(fence, 1); // a late signal of the forgotten event writes nothing anywhere
        d3d12.releaseFence(fence);
    }

    @Test
    void aFenceAtUint64MaxFailsThePendingWaitWithDeviceLost() {
        SyncPoint.D3D12 point = D3D12Fences.adopt(d3d12.createFence(0), 2);
        StepVerifier.create(engine.await(point, Duration.ofSeconds(10)))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(20))
                .then(() -> d3d12.signal(point.fence(), -1L)) // what a device removal does to every fence
                .expectError(DeviceLostException.class)
                .verify(Duration.ofSeconds(10));
        point.waiter().close();
    }

    private static int refCount(MemorySegment fence) {
        D3d12Shim.addRef(fence);
        return D3d12Shim.release(fence);
    }
}
