package io.gpusync.kit;

import org.junit.jupiter.api.Test;

import io.gpusync.internal.UpcallRegistry;

import java.util.concurrent.CompletableFuture;
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
        NativeAnchor anchor = NativeAnchor.borrow("caller's semaphore");
        anchor.claim(new Object()).close();
        assertThat(anchor.isAdopted()).isFalse();
        assertThat(anchor.isReleased()).isTrue(); // given up, nothing was destroyed
    }

    @Test
    void aBorrowedPrimitiveIsLetGoOnlyOnceTheLastWaitInProgressHasReturned() {
        NativeAnchor anchor = NativeAnchor.borrow("caller's fence");
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
