package io.gpusync.vulkan;

import io.gpusync.testsuite.ChildJvm;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.test.vulkan.VulkanContext;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A semaphore or fence that gpusync owns is never destroyed while gpusync has handed it to the driver: not during
 * {@link VulkanDevice#hostSignal} or {@link VulkanDevice#counterValue} (the wait a signal ends may close the last
 * waiter), and not while a {@link VulkanContext} submission that uses it is still pending on the queue (Vulkan
 * forbids destroying a semaphore or fence that a pending batch refers to; lavapipe's queue thread would signal
 * freed memory). Each test uses a context of its own: a submission that waits on a value nobody signals would make
 * a shared device's teardown wait for ever.
 */
class VulkanOwnedHandleBoundaryTest {
    private static long semaphoresDestroyed(VulkanDevice d) {
        return d.state.fns.semaphoresDestroyed.get();
    }

    private static long fencesDestroyed(VulkanDevice d) {
        return d.state.fns.fencesDestroyed.get();
    }

    private static void awaitCount(java.util.function.LongSupplier count, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (count.getAsLong() != expected && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertThat(count.getAsLong()).isEqualTo(expected);
    }

    @Test
    void anOwnedSemaphoreSignalledByAPendingSubmissionOutlivesItsLastWaiterUntilTheSubmissionCompletes()
            throws Exception {
        try (VulkanContext ctx = Lavapipe.context()) {
            VulkanDevice d = ctx.device();
            SyncPoint.Vulkan gate = d.createTimelineSemaphore(0);
            SyncPoint.Vulkan owned = d.createTimelineSemaphore(0);
            long before = semaphoresDestroyed(d);
            ctx.signalOnQueueAfter(gate.semaphore(), 1, owned.semaphore(), 1); // pending until the gate opens

            owned.waiter().close(); // the last waiter: the owned semaphore's only user now is the pending batch
            Thread.sleep(50);
            assertThat(semaphoresDestroyed(d)).as("not destroyed under the pending submission").isEqualTo(before);

            d.hostSignal(gate.semaphore(), 1); // the batch runs, signals the semaphore, completes
            awaitCount(() -> semaphoresDestroyed(d), before + 1);
            gate.waiter().close();
            awaitCount(() -> semaphoresDestroyed(d), before + 2);
        }
    }

    @Test
    void theWaitSemaphoreOfAPendingSubmissionAndItsFenceAreHeldToo() throws Exception {
        try (VulkanContext ctx = Lavapipe.context()) {
            VulkanDevice d = ctx.device();
            long rawGate = d.state.fns.createSemaphore(true, 0);
            SyncPoint.Vulkan gate = d.adoptTimelineSemaphore(rawGate, 1);
            SyncWaiter fence = d.createFence(false);
            SyncPoint.Vulkan signalled = d.createTimelineSemaphore(0);
            long fenceHandle = ((VulkanFenceWaiter) fence).fence();
            long semaphoresBefore = semaphoresDestroyed(d);
            long fencesBefore = fencesDestroyed(d);
            // a batch that waits on the gate, then one that signals the fence behind it
            ctx.signalOnQueueAfter(gate.semaphore(), 1, signalled.semaphore(), 1);
            ctx.signalFenceOnQueue(fenceHandle);

            fence.close();
            Thread.sleep(50);
            assertThat(fencesDestroyed(d)).as("the fence of a pending batch").isEqualTo(fencesBefore);

            d.hostSignal(rawGate, 1);
            gate.waiter().close(); // its pending batch may still be running: it holds the gate
            signalled.await(Duration.ofSeconds(5));
            awaitCount(() -> fencesDestroyed(d), fencesBefore + 1);
            awaitCount(() -> semaphoresDestroyed(d), semaphoresBefore + 1); // the gate, once its batch is done
            signalled.waiter().close();
        }
    }

    @Test
    void aCallThatHandsAnOwnedSemaphoreToTheDriverHoldsItAgainstTheLastWaitersClose() {
        try (VulkanContext ctx = Lavapipe.context()) {
            VulkanDevice d = ctx.device();
            SyncPoint.Vulkan p = d.createTimelineSemaphore(0);
            TimelineSemaphoreWaiter w = (TimelineSemaphoreWaiter) p.waiter();
            long before = semaphoresDestroyed(d);
            d.state.holdOwned(p.semaphore(), "test", () -> {
                w.close(); // as a wait that the call ends would, on another thread
                assertThat(w.anchor().isReleased()).as("held by the call").isFalse();
                assertThat(semaphoresDestroyed(d)).isEqualTo(before);
                return null;
            });
            assertThat(w.anchor().isReleased()).isTrue();
            w.anchor().whenReleased().toCompletableFuture().orTimeout(5, java.util.concurrent.TimeUnit.SECONDS).join(); // the destroy runs on housekeeping
            assertThat(semaphoresDestroyed(d)).isEqualTo(before + 1);
        }
    }

    @Test
    void aBorrowedSemaphoreIsNotHeldAndStaysTheCallers() {
        try (VulkanContext ctx = Lavapipe.context()) {
            VulkanDevice d = ctx.device();
            long raw = d.state.fns.createSemaphore(true, 0);
            SyncPoint.Vulkan p = d.borrowTimelineSemaphore(raw, 1);
            p.waiter().close();
            assertThat(d.state.holdIfOwned(raw, "test")).isNull();
            d.hostSignal(raw, 1);
            assertThat(d.counterValue(raw)).isEqualTo(1);
            d.state.fns.destroySemaphore(raw);
        }
    }

    /**
     * The same hand-over as a user's pipeline makes it, many times, in a child JVM under glibc's malloc checker: a
     * batch waits on a gate and then signals an owned semaphore (and a fence) whose last waiter is closed before the
     * gate opens. The child must exit 0.
     */
    @Test
    void ownedHandlesOfPendingSubmissionsSurviveTheirWaitersUnderTheMallocChecker() throws Exception {
        assumeTrue(Files.isRegularFile(ChildJvm.MALLOC_DEBUG), "glibc's malloc checker is not installed");
        Lavapipe.context().close(); // skips here, with the reason, where there is no Vulkan driver
        String out = ChildJvm.runOk(PendingSubmissionStress.class, List.of("-Xmx256m"), ChildJvm.mallocChecked(165),
                "2000");
        assertThat(out).contains("PENDING SUBMISSION STRESS OK");
    }

    /** Runs in the child JVM: rounds of gate → batch → close the waiters → open the gate, for {@code args[0]} ms. */
    public static final class PendingSubmissionStress {
        public static void main(String[] args) throws Exception {
            long end = System.nanoTime() + Duration.ofMillis(Long.parseLong(args[0])).toNanos();
            int rounds = 0;
            try (VulkanContext ctx = VulkanContext.create()) {
                VulkanDevice d = ctx.device();
                while (System.nanoTime() < end) {
                    SyncPoint.Vulkan gate = d.createTimelineSemaphore(0);
                    SyncPoint.Vulkan owned = d.createTimelineSemaphore(0);
                    SyncWaiter fence = d.createFence(false);
                    ctx.signalOnQueueAfter(gate.semaphore(), 1, owned.semaphore(), 1);
                    ctx.signalFenceOnQueue(((VulkanFenceWaiter) fence).fence());
                    owned.waiter().close();
                    fence.close();
                    d.hostSignal(gate.semaphore(), 1);
                    gate.await(Duration.ofSeconds(5));
                    gate.waiter().close();
                    rounds++;
                }
                SyncPoint.Vulkan last = d.createTimelineSemaphore(0); // every earlier batch is done once this is
                ctx.signalOnQueue(last.semaphore(), 1);
                last.await(Duration.ofSeconds(5));
                last.waiter().close();
            }
            System.out.println("PENDING SUBMISSION STRESS OK rounds=" + rounds);
        }
    }
}
