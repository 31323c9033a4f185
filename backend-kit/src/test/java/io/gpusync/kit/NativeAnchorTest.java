package io.gpusync.kit;

import org.junit.jupiter.api.Test;

import io.gpusync.internal.UpcallRegistry;

import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NativeAnchorTest {

    @Test
    void releaseRunsOnceWhenEveryClaimIsClosed() {
        AtomicInteger releases = new AtomicInteger();
        NativeAnchor anchor = NativeAnchor.adopt("prim", releases::incrementAndGet);
        Object a = new Object();
        Object b = new Object();
        NativeAnchor.Claim first = anchor.claim(a);
        NativeAnchor.Claim second = anchor.claim(b); // a rebound view shares the primitive
        first.close();
        first.close();
        assertThat(releases).hasValue(0);
        second.close();
        assertThat(releases).hasValue(1);
        assertThat(anchor.isReleased()).isTrue();
        assertThatThrownBy(() -> anchor.claim(new Object())).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aCloseDuringAWaitDefersTheReleaseUntilTheWaitReturns() {
        AtomicInteger releases = new AtomicInteger();
        NativeAnchor.Claim claim = NativeAnchor.adopt("prim", releases::incrementAndGet).claim(new Object());
        claim.enter();
        claim.close();
        assertThat(releases).hasValue(0);
        claim.exit();
        assertThat(releases).hasValue(1);
        assertThatThrownBy(claim::enter).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aBorrowedPrimitiveIsNeverReleasedByUs() {
        NativeAnchor anchor = NativeAnchor.borrow(NativeAnchorTest.class, "caller's semaphore");
        anchor.claim(new Object()).close();
        assertThat(anchor.isAdopted()).isFalse();
        assertThat(anchor.isReleased()).isTrue(); // given up, nothing was destroyed
    }

    @Test
    void aBorrowedPrimitiveIsLetGoOnlyOnceTheLastWaitInProgressHasReturned() {
        NativeAnchor anchor = NativeAnchor.borrow(NativeAnchorTest.class, "caller's fence");
        NativeAnchor.Claim claim = anchor.claim(new Object());
        CompletableFuture<Void> letGo = anchor.whenReleased().toCompletableFuture();
        claim.enter();   // a pool thread inside the driver's wait
        claim.close();   // the application closes the waiter: its Mono has long ended
        assertThat(letGo).as("the driver may still be using the handle").isNotDone();
        claim.exit();    // the wait leaves the driver
        assertThat(letGo).isCompleted();
    }

    @Test
    void whenReleasedCompletesAfterTheReleaseActionHasReturnedAndCannotBeCompletedByItsCaller() {
        AtomicInteger releases = new AtomicInteger();
        NativeAnchor anchor = NativeAnchor.adopt("prim", releases::incrementAndGet);
        NativeAnchor.Claim claim = anchor.claim(new Object());
        CompletableFuture<Integer> seen = anchor.whenReleased().thenApply(v -> releases.get()).toCompletableFuture();
        assertThat(anchor.whenReleased().toCompletableFuture().complete(null)).isTrue(); // a copy, not the stage
        assertThat(seen).isNotDone();
        claim.close();
        assertThat(seen).isCompletedWithValue(1);
    }

    @Test
    void aReleaseThatMayBlockRunsOnTheHousekeepingThreadNeverOnTheDroppingThread() throws Exception {
        CompletableFuture<Thread> ranOn = new CompletableFuture<>();
        NativeAnchor.Claim claim = NativeAnchor.adoptBlocking("device",
                () -> ranOn.complete(Thread.currentThread())).claim(new Object());
        claim.close();
        Thread releaser = ranOn.get(5, TimeUnit.SECONDS);
        assertThat(releaser).isNotSameAs(Thread.currentThread());
        assertThat(releaser.getName()).isEqualTo("gpusync-housekeeping-kit"); // the lane of the release's package
    }

    @Test
    void aReleaseDroppedInsideADriverUpcallMovesToTheHousekeepingThread() throws Exception {
        CompletableFuture<Thread> ranOn = new CompletableFuture<>();
        NativeAnchor.Claim claim = NativeAnchor.adopt("event", () -> ranOn.complete(Thread.currentThread()))
                .claim(new Object());
        UpcallRegistry<NativeAnchor.Claim> registry = new UpcallRegistry<>("test");
        long key = registry.register(claim);
        registry.fire(key, NativeAnchor.Claim::close); // as a driver's callback thread would
        assertThat(ranOn.get(5, TimeUnit.SECONDS).getName()).isEqualTo("gpusync-housekeeping-kit");
    }

    @Test
    void aBorrowedPrimitiveLetGoInAnUpcallIsHandedOnInItsBackendsLaneSoAStuckDependantHoldsUpNoOtherBackend()
            throws Exception {
        UpcallRegistry<NativeAnchor.Claim> registry = new UpcallRegistry<>("test");
        CountDownLatch userCodeReturns = new CountDownLatch(1);
        try {
            // one backend's borrowed point: what the owner chained on its let-go never returns (a raw destroy stuck)
            NativeAnchor stuck = NativeAnchor.borrow(ArrayList.class, "caller's semaphore");
            CompletableFuture<String> stuckRanOn = new CompletableFuture<>();
            stuck.whenReleased().thenRun(() -> {
                stuckRanOn.complete(Thread.currentThread().getName());
                awaitQuietly(userCodeReturns);
            });
            registry.fire(registry.register(stuck.claim(new Object())), NativeAnchor.Claim::close);
            assertThat(stuckRanOn.get(5, TimeUnit.SECONDS)).isEqualTo("gpusync-housekeeping-util");

            // another backend's borrowed point, let go in a driver's callback too
            NativeAnchor other = NativeAnchor.borrow(Executor.class, "caller's event");
            CompletableFuture<String> otherRanOn = new CompletableFuture<>();
            other.whenReleased().thenRun(() -> otherRanOn.complete(Thread.currentThread().getName()));
            registry.fire(registry.register(other.claim(new Object())), NativeAnchor.Claim::close);
            assertThat(otherRanOn.get(5, TimeUnit.SECONDS)).isEqualTo("gpusync-housekeeping-concurrent");
        } finally {
            userCodeReturns.countDown();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aQuickReleaseRunsInlineOnTheThreadThatDropsTheLastHold() {
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        NativeAnchor.adopt("semaphore", () -> ranOn.set(Thread.currentThread())).claim(new Object()).close();
        assertThat(ranOn.get()).isSameAs(Thread.currentThread());
    }

    @Test
    void callHoldsThePrimitiveForTheActionAndRefusesOnceClosed() {
        AtomicInteger releases = new AtomicInteger();
        NativeAnchor.Claim claim = NativeAnchor.adopt("prim", releases::incrementAndGet).claim(new Object());
        int seen = claim.call(() -> {
            claim.close(); // a close during the action defers the release
            return releases.get();
        });
        assertThat(seen).isZero();
        assertThat(releases).hasValue(1);
        assertThatThrownBy(() -> claim.run(() -> { })).isInstanceOf(IllegalStateException.class);
    }
}
