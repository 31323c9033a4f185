package io.gpusync.reactor.soak;

import io.gpusync.SyncTimeoutException;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The soak's bookkeeping: a wait counts as lost only where the engine owed it an end — its timeout passed, or its
 * signal was given — never where the soak's own signal for an unbounded wait is stuck in a driver call.
 */
class LedgerTest {
    private final Ledger ledger = new Ledger(0);
    private final PrintStream out = new PrintStream(new ByteArrayOutputStream());
    private final SyncEngine engine = GpuSync.builder().name("ledger-test").build();

    @AfterEach
    void disposeEngine() {
        engine.dispose();
    }

    private Ledger.Wait open(boolean unbounded) {
        Ledger.Wait w = ledger.open("cpu-timeline/signal", engine, Ledger.Expect.COMPLETE, -1, 0, () -> { });
        w.unbounded = unbounded;
        return w;
    }

    private static void pastItsDeadline() throws InterruptedException {
        TimeUnit.MILLISECONDS.sleep(2);
    }

    @Test
    void anUnboundedWaitWhoseSignalNeverStartedIsAHeldUpSignalNotALostWait() throws InterruptedException {
        open(true);
        pastItsDeadline();
        ledger.findOverdue(out);
        assertThat(ledger.lost.sum()).isZero();
        assertThat(ledger.heldUp.sum()).isOne();
        assertThat(ledger.problems).singleElement().asString()
                .startsWith("held-up signal: cpu-timeline/signal").contains("its signal has not started");
    }

    @Test
    void anUnboundedWaitWhoseSignalCallHasNotReturnedIsAHeldUpSignal() throws InterruptedException {
        open(true).signalling();
        pastItsDeadline();
        ledger.findOverdue(out);
        assertThat(ledger.heldUp.sum()).isOne();
        assertThat(ledger.problems).singleElement().asString().contains("its signal call has not returned");
    }

    @Test
    void anUnboundedWaitSignalledButNotEndedWithinTheGraceIsLost() throws InterruptedException {
        Ledger.Wait w = open(true);
        w.signalling();
        w.signalledNow();
        pastItsDeadline();
        ledger.findOverdue(out);
        assertThat(ledger.lost.sum()).isOne();
        assertThat(ledger.heldUp.sum()).isZero();
        assertThat(ledger.problems).singleElement().asString()
                .startsWith("lost wait: cpu-timeline/signal (#1, no timeout)").contains("signalled");
    }

    @Test
    void aWaitWithATimeoutPastItsDeadlineIsLostWhetherOrNotItWasSignalled() throws InterruptedException {
        open(false);
        pastItsDeadline();
        ledger.findOverdue(out);
        assertThat(ledger.lost.sum()).isOne();
        assertThat(ledger.problems).singleElement().asString().contains("its signal has not started")
                .doesNotContain("no timeout");
    }

    @Test
    void aWaitIsReportedOnceAndItsLateEndIsNotCountedAgain() throws InterruptedException {
        Ledger.Wait w = open(false);
        pastItsDeadline();
        ledger.findOverdue(out);
        ledger.findOverdue(out);
        w.onError(new SyncTimeoutException("late"));
        assertThat(ledger.lost.sum()).isOne();
        assertThat(ledger.lateEnds.sum()).isZero();
        assertThat(ledger.problemCount()).isOne();
    }

    @Test
    void aWaitThatEndsWithinTheGraceOfItsSignalIsNeitherLostNorHeldUp() {
        Ledger graced = new Ledger(TimeUnit.SECONDS.toNanos(5));
        Ledger.Wait w = graced.open("eventfd/signal", engine, Ledger.Expect.COMPLETE, -1, 0, () -> { });
        w.unbounded = true;
        w.signalling();
        w.signalledNow();
        w.onComplete();
        graced.findOverdue(out);
        assertThat(graced.lost.sum() + graced.heldUp.sum() + graced.lateEnds.sum()).isZero();
        assertThat(graced.completed.sum()).isOne();
        assertThat(graced.problems).isEmpty();
    }
}
