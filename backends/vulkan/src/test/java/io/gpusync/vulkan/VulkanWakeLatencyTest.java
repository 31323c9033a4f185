package io.gpusync.vulkan;

import io.gpusync.SyncPoint;
import io.gpusync.spi.WaitSet;
import io.gpusync.spi.WaitSetMember;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.gpusync.vulkan.Lavapipe.onPlatformThread;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Quick measurements on lavapipe, printed for the record, with loose bounds so that the test only fails when
 * a wake-up takes an order of magnitude longer than it should (this box is shared and noisy).
 */
class VulkanWakeLatencyTest extends OnLavapipe {
    private static final int ROUNDS = 300;
    /** Host signal → a thread blocked in await returns: p50 in the tens of microseconds at worst. */
    @Test
    void aHostSignalWakesABlockedAwaitWithinMilliseconds() throws Exception {
        SyncPoint.Vulkan base = device.createTimelineSemaphore(0);
        long[] latencies = new long[ROUNDS];
        AtomicLong signalledAt = new AtomicLong();
        try {
            for (int i = 0; i < ROUNDS; i++) {
                SyncPoint p = base.withValue(i + 1);
                CompletableFuture<Long> woke = onPlatformThread(() -> {
                    p.await(Duration.ofSeconds(10));
                    return System.nanoTime();
                });
                Thread.sleep(1); // let the waiter block in the driver
                signalledAt.set(System.nanoTime());
                device.hostSignal(base.semaphore(), i + 1);
                latencies[i] = woke.get(10, TimeUnit.SECONDS) - signalledAt.get();
                p.waiter().close();
            }
        } finally {
            base.waiter().close();
        }
        report("host vkSignalSemaphore → await returns", latencies);
        Arrays.sort(latencies);
        assertThat(latencies[ROUNDS / 2]).isLessThan(Duration.ofMillis(5).toNanos());
    }

    /** wakeUp() → a thread blocked in awaitAny returns. */
    @Test
    void aWakeUpEndsABlockedAwaitAnyWithinMilliseconds() throws Exception {
        SyncPoint.Vulkan base = device.createTimelineSemaphore(0);
        SyncPoint p = base.withValue(1);
        WaitSet ws = device.waitSet();
        ws.awaitAny(List.of(), Duration.ZERO);
        long[] latencies = new long[ROUNDS];
        try {
            for (int i = 0; i < ROUNDS; i++) {
                CompletableFuture<Long> woke = onPlatformThread(() -> {
                    ws.awaitAny(List.of((WaitSetMember) p.waiter()), Duration.ofSeconds(10));
                    return System.nanoTime();
                });
                Thread.sleep(1);
                long t0 = System.nanoTime();
                ws.wakeUp();
                latencies[i] = woke.get(10, TimeUnit.SECONDS) - t0;
            }
        } finally {
            p.waiter().close();
            base.waiter().close();
        }
        report("WaitSet.wakeUp → awaitAny returns", latencies);
        Arrays.sort(latencies);
        assertThat(latencies[ROUNDS / 2]).isLessThan(Duration.ofMillis(5).toNanos());
    }

    /** How much CPU a thread burns while blocked in awaitAny with members (the driver may spin on WAIT_ANY). */
    @Test
    void awaitAnyCpuCostIsRecorded() throws Exception {
        SyncPoint.Vulkan a = device.createTimelineSemaphore(0);
        SyncPoint.Vulkan b = device.createTimelineSemaphore(0);
        SyncPoint a1 = a.withValue(1);
        SyncPoint b1 = b.withValue(1);
        Duration slice = Duration.ofMillis(300);
        try {
            long[] cpuAndWall = onPlatformThread(() -> {
                long cpu0 = threadCpuNanos();
                long t0 = System.nanoTime();
                device.waitSet().awaitAny(List.of((WaitSetMember) a1.waiter(), (WaitSetMember) b1.waiter()), slice);
                return new long[]{threadCpuNanos() - cpu0, System.nanoTime() - t0};
            }).get(10, TimeUnit.SECONDS);
            long[] single = onPlatformThread(() -> {
                long cpu0 = threadCpuNanos();
                long t0 = System.nanoTime();
                try {
                    a1.await(slice);
                } catch (io.gpusync.SyncTimeoutException expected) {
                    // the point of the exercise
                }
                return new long[]{threadCpuNanos() - cpu0, System.nanoTime() - t0};
            }).get(10, TimeUnit.SECONDS);
            System.out.printf("[vulkan] awaitAny over 2 members + wake-up for %d ms: CPU %.1f ms; "
                            + "await on one semaphore for %d ms: CPU %.1f ms%n", cpuAndWall[1] / 1_000_000,
                    cpuAndWall[0] / 1e6, single[1] / 1_000_000, single[0] / 1e6);
            assertThat(cpuAndWall[1]).isGreaterThanOrEqualTo(slice.toNanos() / 2);
        } finally {
            a1.waiter().close();
            b1.waiter().close();
            a.waiter().close();
            b.waiter().close();
        }
    }

    /** A probe is a counter read: microseconds at most, never a wait. */
    @Test
    void aProbeCostsAtMostMicroseconds() {
        SyncPoint.Vulkan base = device.createTimelineSemaphore(0);
        SyncPoint p = base.withValue(1);
        try {
            int n = 200_000;
            for (int i = 0; i < n; i++) {
                p.isSignaled(); // warm-up
            }
            long t0 = System.nanoTime();
            int hits = 0;
            for (int i = 0; i < n; i++) {
                hits += p.isSignaled() ? 1 : 0;
            }
            double perProbe = (System.nanoTime() - t0) / (double) n;
            System.out.printf("[vulkan] isSignaled (vkGetSemaphoreCounterValue + unsigned compare): %.0f ns/probe%n",
                    perProbe);
            assertThat(hits).isZero();
            assertThat(perProbe).isLessThan(20_000);
        } finally {
            p.waiter().close();
            base.waiter().close();
        }
    }

    /** This thread's CPU time from /proc/thread-self/schedstat (Linux), ns. */
    private static long threadCpuNanos() throws IOException {
        return Long.parseLong(Files.readString(Path.of("/proc/thread-self/schedstat")).trim().split("\\s+")[0]);
    }

    private static void report(String what, long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        System.out.printf("[vulkan] %s over %d rounds: p50 %.1f µs, p90 %.1f µs, p99 %.1f µs, max %.1f µs%n", what,
                sorted.length, sorted[sorted.length / 2] / 1e3, sorted[sorted.length * 9 / 10] / 1e3,
                sorted[sorted.length * 99 / 100] / 1e3, sorted[sorted.length - 1] / 1e3);
    }
}
