package io.gpusync.testsuite;

import io.gpusync.BackendKind;
import io.gpusync.CudaEventWaiter;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.VulkanSemaphoreKind;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** gpu-handle-types' acceptance behaviours, in Java. */
class SyncWaiterContractTest {

    @Test
    void cpuAndNoopAreSignalledAndAwaitAtOnce() {
        for (SyncPoint p : new SyncPoint[] {SyncPoint.CPU, SyncPoint.NOOP}) {
            long t0 = System.nanoTime();
            p.await();
            p.await(Duration.ZERO);
            p.await(SyncPoint.FOREVER);
            assertThat(System.nanoTime() - t0).isLessThan(Duration.ofSeconds(1).toNanos());
            assertThat(p.isSignaled()).isTrue();
            assertThat(p.backend()).isEqualTo(BackendKind.CPU);
            assertThat(p.waiter()).isSameAs(SyncWaiter.SIGNALLED);
        }
    }

    @Test
    void aWaiterThatTurnsSignalledAfterNProbesCompletesThroughTheProbingPath() {
        var waiter = new TestWaiters.SignalledAfterProbes(500);
        waiter.await(Duration.ofSeconds(5));
        assertThat(waiter.probes.get()).isEqualTo(501);
    }

    @Test
    void aNeverSignallingWaiterTimesOutNoEarlierThanItsTimeout() {
        Duration timeout = Duration.ofMillis(150);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> new TestWaiters.NeverSignalled().await(timeout))
                .isInstanceOf(SyncTimeoutException.class)
                .satisfies(e -> assertThat(((SyncException) e).kind()).isEqualTo(ErrorKind.RECOVERABLE));
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(timeout.toNanos());

        var probing = new TestWaiters.SignalledAfterProbes(Integer.MAX_VALUE);
        long t1 = System.nanoTime();
        assertThatThrownBy(() -> probing.await(timeout)).isInstanceOf(SyncTimeoutException.class);
        assertThat(System.nanoTime() - t1).isGreaterThanOrEqualTo(timeout.toNanos());
    }

    @Test
    void repeatedProbesOfASettledWaiterAreIdempotent() {
        var waiter = new TestWaiters.SignalledAfterProbes(0);
        for (int i = 0; i < 100; i++) {
            assertThat(waiter.isSignaled()).isTrue();
        }
        var never = new TestWaiters.NeverSignalled();
        for (int i = 0; i < 100; i++) {
            assertThat(never.isSignaled()).isFalse();
        }
    }

    @Test
    void isSignaledPropagatesADriverErrorInsteadOfReturningFalse() {
        assertThatThrownBy(() -> new TestWaiters.LostDevice().isSignaled())
                .isInstanceOf(DeviceLostException.class)
                .satisfies(e -> {
                    SyncException se = (SyncException) e;
                    assertThat(se.kind()).isEqualTo(ErrorKind.FATAL);
                    assertThat(se.backend()).contains(BackendKind.VULKAN);
                });
    }

    @Test
    void theCudaEventVariantDispatchesToItsWaiterAndReleasesExactlyOnceAfterTheLastReference()
            throws InterruptedException {
        AtomicInteger releases = new AtomicInteger();
        SyncPoint point = new SyncPoint.CudaEvent(MemorySegment.ofAddress(0x1000), MemorySegment.ofAddress(0x2000),
                0, new TestWaiters.CountingCudaEventWaiter(releases));
        assertThat(point.backend()).isEqualTo(BackendKind.CUDA);
        assertThat(point.isSignaled()).isTrue();
        point.await(Duration.ofMillis(10));
        assertThat(releases).hasValue(0);

        point = null; // the last reference to the point and its waiter
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (releases.get() == 0 && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(10);
        }
        assertThat(releases).hasValue(1);
        System.gc();
        Thread.sleep(50);
        assertThat(releases).hasValue(1);
    }

    @Test
    void closingTheWaiterReleasesOnceAndLaterWaitsAreRefused() {
        AtomicInteger releases = new AtomicInteger();
        var waiter = new TestWaiters.CountingCudaEventWaiter(releases);
        waiter.close();
        waiter.close();
        assertThat(releases).hasValue(1);
        assertThatThrownBy(() -> waiter.await(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void waitOnForeignStreamIsReachableThroughAsCudaEventWaiter() {
        var waiter = new TestWaiters.CountingCudaEventWaiter(new AtomicInteger());
        SyncPoint point = new SyncPoint.CudaEvent(MemorySegment.ofAddress(0x1000), MemorySegment.NULL, 0, waiter);
        SyncWaiter erased = point.waiter();
        erased.asCudaEventWaiter().orElseThrow().waitOnForeignStream(MemorySegment.NULL);
        erased.asCudaEventWaiter().orElseThrow().waitOnForeignStream(MemorySegment.ofAddress(0xabc));
        assertThat(waiter.streams).containsExactly(MemorySegment.NULL, MemorySegment.ofAddress(0xabc));
        assertThat(erased.unwrap(TestWaiters.CountingCudaEventWaiter.class)).containsSame(waiter);
        assertThat(new TestWaiters.NeverSignalled().asCudaEventWaiter()).isEmpty();
        assertThat(SyncWaiter.SIGNALLED.unwrap(CudaEventWaiter.class)).isEmpty();
    }

    @Test
    void withValueRoutesThroughRebindToValue() {
        long big = 0x8000_0000_0000_0005L; // ≥ 2^63
        SyncPoint p = new SyncPoint.Vulkan(7, VulkanSemaphoreKind.TIMELINE, 1, MemorySegment.NULL,
                new TestWaiters.ValueWaiter(1));
        SyncPoint q = p.withValue(big);
        assertThat(((SyncPoint.Vulkan) q).value()).isEqualTo(big);
        assertThat(q.waiter()).isEqualTo(new TestWaiters.ValueWaiter(big));

        SyncPoint cuda = new SyncPoint.Cuda(MemorySegment.NULL, OptionalLong.of(3), new TestWaiters.ValueWaiter(3));
        assertThat(cuda.withValue(4).waiter()).isEqualTo(new TestWaiters.ValueWaiter(4));
    }

    @Test
    void withValueIsRefusedWhereThereIsNoValueOrTheWaiterCannotRebind() {
        SyncPoint binary = new SyncPoint.Vulkan(7, VulkanSemaphoreKind.BINARY, 0, MemorySegment.NULL,
                new TestWaiters.ValueWaiter(0));
        assertThatThrownBy(() -> binary.withValue(1)).isInstanceOf(SyncInvalidArgumentException.class);
        assertThatThrownBy(() -> SyncPoint.CPU.withValue(1)).isInstanceOf(SyncInvalidArgumentException.class)
                .hasMessageContaining("carries no value");
        SyncPoint noValue = new SyncPoint.OpenCl(MemorySegment.NULL, SyncWaiter.SIGNALLED);
        assertThatThrownBy(() -> noValue.withValue(1)).isInstanceOf(SyncInvalidArgumentException.class);
        SyncPoint cannot = new SyncPoint.D3D12(MemorySegment.NULL, 1, new TestWaiters.NeverSignalled());
        assertThatThrownBy(() -> cannot.withValue(2)).isInstanceOf(SyncInvalidArgumentException.class)
                .hasMessageContaining("cannot rebind");
    }

    @Test
    void recordsRejectMissingHandles() {
        assertThatThrownBy(() -> new SyncPoint.Vulkan(1, VulkanSemaphoreKind.TIMELINE, 0, null, SyncWaiter.SIGNALLED))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("device");
        assertThatThrownBy(() -> new SyncPoint.SyncFd(-1, SyncWaiter.SIGNALLED))
                .isInstanceOf(SyncInvalidArgumentException.class);
        assertThatThrownBy(() -> new SyncPoint.Wgpu(1, null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void anInterruptedProbeLoopThrowsSyncCancelledPromptlyAndKeepsTheFlag() throws Exception {
        var never = new TestWaiters.SignalledAfterProbes(Integer.MAX_VALUE);
        CompletableFuture<Boolean> flag = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            Thread.currentThread().interrupt();
            try {
                never.await(Duration.ofSeconds(30));
                flag.completeExceptionally(new AssertionError("returned"));
            } catch (SyncCancelledException expected) {
                flag.complete(Thread.currentThread().isInterrupted());
            } catch (Throwable other) {
                flag.completeExceptionally(other);
            }
        });
        assertThat(flag.get(5, TimeUnit.SECONDS)).as("interrupt flag kept").isTrue();
    }
}
