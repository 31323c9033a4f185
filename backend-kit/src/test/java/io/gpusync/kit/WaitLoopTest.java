package io.gpusync.kit;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncTimeoutException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WaitLoopTest {
    private static final SyncTimeoutException TIMED_OUT = new SyncTimeoutException("timed out");

    @Test
    void durationZeroIsExactlyOneProbe() {
        List<Long> slices = new CopyOnWriteArrayList<>();
        assertThatThrownBy(() -> WaitLoop.await(Duration.ZERO, WaitLoop.INTERRUPT_CHECK_NANOS,
                nanos -> slices.add(nanos) && false, "p", () -> TIMED_OUT)).isSameAs(TIMED_OUT);
        assertThat(slices).containsExactly(0L);
    }

    @Test
    void slicesAreBoundedAndAnEarlyReturnIsWaitedOnAgainNeverReportedAsATimeout() {
        List<Long> slices = new CopyOnWriteArrayList<>();
        WaitLoop.await(Duration.ofSeconds(10), 1_000_000L, nanos -> {
            slices.add(nanos);
            return slices.size() == 3; // two early returns, then signalled
        }, "p", () -> TIMED_OUT);
        assertThat(slices).hasSize(3).allSatisfy(n -> assertThat(n).isBetween(1L, 1_000_000L));
    }

    @Test
    void aTimeoutIsNeverReportedBeforeTheDeadline() {
        Duration timeout = Duration.ofMillis(30);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> WaitLoop.await(timeout, 5_000_000L, nanos -> false, "p", () -> TIMED_OUT))
                .isSameAs(TIMED_OUT);
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(timeout.toNanos());
    }

    @Test
    void anInterruptedThreadGetsOneLastProbeThenSyncCancelledWithItsFlagKept() {
        List<Long> slices = new CopyOnWriteArrayList<>();
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> WaitLoop.await(Duration.ofSeconds(30), WaitLoop.INTERRUPT_CHECK_NANOS,
                    nanos -> slices.add(nanos) && false, "the point", () -> TIMED_OUT))
                    .isInstanceOf(SyncCancelledException.class).hasMessageContaining("the point");
            assertThat(slices).containsExactly(0L);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
            WaitLoop.await(Duration.ofSeconds(30), WaitLoop.INTERRUPT_CHECK_NANOS, nanos -> true, "p",
                    () -> TIMED_OUT); // signalled: the interrupt does not turn a success into a failure
        } finally {
            Thread.interrupted();
        }
    }
}
