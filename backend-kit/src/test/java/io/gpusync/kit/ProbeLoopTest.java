package io.gpusync.kit;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncTimeoutException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A wait made of zero-timeout probes: it never blocks in the probe, and keeps WaitLoop's rules. */
class ProbeLoopTest {
    private static final SyncTimeoutException TIMED_OUT = new SyncTimeoutException("timed out");

    @Test
    void probesUntilSignalledAndReturnsAtOnceThen() {
        AtomicInteger probes = new AtomicInteger();
        ProbeLoop.await(Duration.ofSeconds(10), () -> probes.incrementAndGet() == 200, "p", () -> TIMED_OUT);
        assertThat(probes.get()).isEqualTo(200);
    }

    @Test
    void aTimeoutComesNoEarlierThanTheDeadlineAndBacksOffMeanwhile() {
        AtomicInteger probes = new AtomicInteger();
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> ProbeLoop.await(Duration.ofMillis(200), () -> probes.incrementAndGet() < 0, "p",
                () -> TIMED_OUT)).isSameAs(TIMED_OUT);
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(Duration.ofMillis(200).toNanos());
        // 64 spins and 64 yields, then sleeps that double up to 1 ms: a few hundred probes in 200 ms, not millions
        assertThat(probes.get()).isBetween(129, 129 + 400);
    }

    @Test
    void aProbeThatThrowsEndsTheWaitAtOnce() {
        SyncBackendException lost = new SyncBackendException(ErrorKind.FATAL, BackendKind.OPENGL, 12302,
                "EGL_CONTEXT_LOST", "lost");
        assertThatThrownBy(() -> ProbeLoop.await(Duration.ofSeconds(30), () -> {
            throw lost;
        }, "p", () -> TIMED_OUT)).isSameAs(lost);
    }

    @Test
    void anInterruptEndsASleepingProbeLoopWithSyncCancelledAndKeepsTheFlag() throws Exception {
        CompletableFuture<Thread> waiter = new CompletableFuture<>();
        CompletableFuture<Boolean> flagKept = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().start(() -> {
            waiter.complete(Thread.currentThread());
            try {
                ProbeLoop.await(Duration.ofMinutes(5), () -> false, "the point", () -> TIMED_OUT);
                flagKept.completeExceptionally(new AssertionError("returned"));
            } catch (SyncCancelledException e) {
                flagKept.complete(Thread.currentThread().isInterrupted());
            }
        });
        Thread.sleep(50); // into its 1-ms sleeps
        waiter.get().interrupt();
        assertThat(flagKept.get(5, TimeUnit.SECONDS)).isTrue();
        t.join();
    }
}
