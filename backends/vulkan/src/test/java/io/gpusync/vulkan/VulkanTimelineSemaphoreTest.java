package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.VulkanSemaphoreKind;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.WaitSetMember;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.gpusync.vulkan.Lavapipe.onPlatformThread;
import static io.gpusync.vulkan.Lavapipe.settle;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Timeline-semaphore points on a real lavapipe device. */
class VulkanTimelineSemaphoreTest extends OnLavapipe {
    @Test
    void aCreatedSemaphoreIsAnOwnedTimelinePointAtItsInitialValue() {
        SyncPoint.Vulkan p = device.createTimelineSemaphore(7);
        try {
            assertThat(p.kind()).isEqualTo(VulkanSemaphoreKind.TIMELINE);
            assertThat(p.value()).isEqualTo(7);
            assertThat(p.semaphore()).isNotZero();
            assertThat(p.device()).isEqualTo(device.handle());
            assertThat(p.backend()).isEqualTo(BackendKind.VULKAN);
            assertThat(p.waiter()).isInstanceOf(BlockingWaiter.class).isInstanceOf(WaitSetMember.class);
            assertThat(p.waiter().unwrap(VulkanDevice.class)).containsSame(device);
            assertThat(((TimelineSemaphoreWaiter) p.waiter()).anchor().isAdopted()).isTrue();
            assertThat(p.isSignaled()).isTrue();
            assertThat(device.counterValue(p.semaphore())).isEqualTo(7);
            p.await(Duration.ZERO);
        } finally {
            p.waiter().close();
        }
    }

    @Test
    void aHostSignalFromAnotherThreadWakesAThreadBlockedInAwait() throws Exception {
        SyncPoint.Vulkan p0 = device.createTimelineSemaphore(0);
        SyncPoint p1 = p0.withValue(1);
        try {
            CompletableFuture<Void> waiting = onPlatformThread(() -> p1.await(SyncPoint.FOREVER));
            settle();
            assertThat(waiting).isNotDone();
            assertThat(p1.isSignaled()).isFalse();
            device.hostSignal(p0.semaphore(), 1);
            waiting.get(5, TimeUnit.SECONDS);
            assertThat(p1.isSignaled()).isTrue();
        } finally {
            p1.waiter().close();
            p0.waiter().close();
        }
    }

    @Test
    void aQueueSignalledTimelineValueCompletesTheWait() throws Exception {
        SyncPoint.Vulkan gate = device.createTimelineSemaphore(0);
        SyncPoint.Vulkan p0 = device.createTimelineSemaphore(0);
        SyncPoint p1 = p0.withValue(1);
        SyncPoint p2 = p0.withValue(2);
        try {
            ctx.signalOnQueue(p0.semaphore(), 1);
            p1.await(Duration.ofSeconds(5));

            // the queue signals 2 only after the host opens the gate: the waiter is blocked until then
            ctx.signalOnQueueAfter(gate.semaphore(), 1, p0.semaphore(), 2);
            CompletableFuture<Void> waiting = onPlatformThread(() -> p2.await(SyncPoint.FOREVER));
            settle();
            assertThat(waiting).isNotDone();
            device.hostSignal(gate.semaphore(), 1);
            waiting.get(5, TimeUnit.SECONDS);
            assertThat(device.counterValue(p0.semaphore())).isEqualTo(2);
        } finally {
            p2.waiter().close();
            p1.waiter().close();
            p0.waiter().close();
            gate.waiter().close();
        }
    }

    @Test
    void aTimedOutWaitThrowsNoEarlierThanItsTimeoutAndSaysWhatItWaitedOn() {
        SyncPoint.Vulkan p = device.createTimelineSemaphore(0);
        SyncPoint p3 = p.withValue(3);
        try {
            Duration timeout = Duration.ofMillis(100);
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> p3.await(timeout)).isInstanceOf(SyncTimeoutException.class)
                    .hasMessageContaining("0x" + Long.toHexString(p.semaphore()))
                    .hasMessageContaining("≥ 3")
                    .hasMessageContaining("0.1s");
            assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(timeout.toNanos());
        } finally {
            p3.waiter().close();
            p.waiter().close();
        }
    }

    @Test
    void zeroIsAProbeSubMillisecondTimeoutsStillWaitAndForeverReturnsOnAReachedValue() {
        SyncPoint.Vulkan p = device.createTimelineSemaphore(0);
        SyncPoint p1 = p.withValue(1);
        try {
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> p1.await(Duration.ZERO)).isInstanceOf(SyncTimeoutException.class)
                    .hasMessageContaining("0 (probe)");
            assertThatThrownBy(() -> p1.await(Duration.ofNanos(1))).isInstanceOf(SyncTimeoutException.class);
            assertThat(System.nanoTime() - t0).isLessThan(Duration.ofSeconds(1).toNanos());

            Duration subMilli = Duration.ofNanos(300_000);
            long t1 = System.nanoTime();
            assertThatThrownBy(() -> p1.await(subMilli)).isInstanceOf(SyncTimeoutException.class);
            assertThat(System.nanoTime() - t1).isGreaterThanOrEqualTo(subMilli.toNanos());

            p.await(SyncPoint.FOREVER); // value 0 is reached: FOREVER (UINT64_MAX) returns at once
            assertThatThrownBy(() -> p1.await(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
        } finally {
            p1.waiter().close();
            p.waiter().close();
        }
    }

    @Test
    void valuesAreUnsigned64BitIncludingThoseAtOrAbove2To63() throws Exception {
        long twoTo63 = 0x8000_0000_0000_0000L;
        SyncPoint.Vulkan p = device.createTimelineSemaphore(Long.MAX_VALUE);
        SyncPoint high = p.withValue(twoTo63);
        SyncPoint max = p.withValue(-1L); // 2^64 - 1
        try {
            assertThat(high.isSignaled()).isFalse();
            CompletableFuture<Void> waiting = onPlatformThread(() -> high.await(SyncPoint.FOREVER));
            settle();
            assertThat(waiting).isNotDone();
            device.hostSignal(p.semaphore(), twoTo63);
            waiting.get(5, TimeUnit.SECONDS);
            assertThat(high.isSignaled()).isTrue();
            assertThat(max.isSignaled()).isFalse();
            assertThat(device.counterValue(p.semaphore())).isEqualTo(twoTo63);
            device.hostSignal(p.semaphore(), -1L);
            assertThat(max.isSignaled()).isTrue();
            max.await(Duration.ofSeconds(1));
            assertThat(Long.toUnsignedString(device.counterValue(p.semaphore()))).isEqualTo("18446744073709551615");
        } finally {
            max.waiter().close();
            high.waiter().close();
            p.waiter().close();
        }
    }

    @Test
    void withValueRoutesThroughRebindToValueAndWaitsOnTheNewValueOfTheSameSemaphore() {
        SyncPoint.Vulkan p0 = device.createTimelineSemaphore(0);
        SyncPoint.Vulkan p5 = (SyncPoint.Vulkan) p0.withValue(5);
        try {
            assertThat(p5.semaphore()).isEqualTo(p0.semaphore());
            assertThat(p5.value()).isEqualTo(5);
            assertThat(p5.waiter()).isNotSameAs(p0.waiter());
            assertThat(((TimelineSemaphoreWaiter) p5.waiter()).value).isEqualTo(5);
            assertThat(((TimelineSemaphoreWaiter) p5.waiter()).anchor())
                    .isSameAs(((TimelineSemaphoreWaiter) p0.waiter()).anchor());
            assertThat(p5.isSignaled()).isFalse();
            device.hostSignal(p0.semaphore(), 5);
            assertThat(p5.isSignaled()).isTrue();
            p5.await(Duration.ofSeconds(1));
        } finally {
            p5.waiter().close();
            p0.waiter().close();
        }
    }

    @Test
    void hostSignalRefusesAValueNotAboveTheCounterWithoutLosingTheDevice() {
        SyncPoint.Vulkan p = device.createTimelineSemaphore(4);
        try {
            assertThatThrownBy(() -> device.hostSignal(p.semaphore(), 4)).isInstanceOf(SyncInvalidArgumentException.class)
                    .hasMessageContaining("strictly increase");
            assertThatThrownBy(() -> device.hostSignal(p.semaphore(), 3)).isInstanceOf(SyncInvalidArgumentException.class);
            device.hostSignal(p.semaphore(), 5);
            assertThat(p.withValue(5).isSignaled()).isTrue();
            assertThat(device.state.isLost()).isFalse();
        } finally {
            p.waiter().close();
        }
    }

    @Test
    void everyTimelineWaiterOfADeviceSharesOneWaitSetAcrossWrappedViews() {
        SyncPoint.Vulkan a = device.createTimelineSemaphore(0);
        try (VulkanDevice again = VulkanDevice.wrap(ctx.instance(), device.handle())) {
            SyncPoint.Vulkan b = again.createTimelineSemaphore(0);
            try {
                assertThat(again.waitSet()).isSameAs(device.waitSet());
                assertThat(((WaitSetMember) a.waiter()).waitSet()).isEqualTo(((WaitSetMember) b.waiter()).waitSet());
                assertThat(b.waiter().unwrap(VulkanDevice.class)).containsSame(again);
            } finally {
                b.waiter().close();
            }
        } finally {
            a.waiter().close();
        }
        try (VulkanFenceWaiter f = (VulkanFenceWaiter) device.createFence(false)) { // the original view is still open
            assertThat(f.device()).isSameAs(device);
        }
    }
}
