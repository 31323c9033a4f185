package io.gpusync.spi;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NativeAnchorTest {

    @Test
    void releaseRunsOnceWhenEveryClaimIsClosed() {
        AtomicInteger releases = new AtomicInteger();
        NativeAnchor anchor = NativeAnchor.owned("prim", releases::incrementAndGet);
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
        NativeAnchor.Claim claim = NativeAnchor.owned("prim", releases::incrementAndGet).claim(new Object());
        claim.enter();
        claim.close();
        assertThat(releases).hasValue(0);
        claim.exit();
        assertThat(releases).hasValue(1);
        assertThatThrownBy(claim::enter).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aBorrowedPrimitiveIsNeverReleasedByUs() {
        NativeAnchor anchor = NativeAnchor.borrowed("caller's semaphore");
        anchor.claim(new Object()).close();
        assertThat(anchor.isOwned()).isFalse();
        assertThat(anchor.isReleased()).isTrue(); // given up, nothing was destroyed
    }
}
