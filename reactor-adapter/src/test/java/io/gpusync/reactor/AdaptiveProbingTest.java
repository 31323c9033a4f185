package io.gpusync.reactor;

import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Operators;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The adaptive probe scheduler's decisions, as functions of a wait's age and its source's learned completion times:
 * a learned source's waits are left alone before their hot window, probed on (almost) every pass inside it, and
 * probed ever more rarely once overdue, joining the cold list; an unlearned source's waits are spun on for the spin
 * budget first; cold probes land on a shared grid; the cold list's interval keeps its share of a core bounded.
 */
class AdaptiveProbingTest {
    private static final long SPIN = 50_000;
    private final CpuTimeline timeline = new CpuTimeline();

    /** A wait started now (its start is {@code startNanos}; the decisions below take the time as an argument). */
    private PendingWait newWait() {
        PendingWait w = new PendingWait((x, o) -> { }, timeline.at(1).waiter(), Duration.ofSeconds(1),
                Operators.emptySubscriber(), null);
        w.polled = new PollState(); // as the pollers give it when they take a wait
        return w;
    }

    private static CompletionTimes learnedAround(long nanos, int samples) {
        CompletionTimes t = new CompletionTimes();
        for (int i = 0; i < samples; i++) {
            t.record(nanos + (i % 5) * nanos / 50); // within ±10 %
        }
        return t;
    }

    @Test
    void aSourceIsLearnedAfterAFewCompletionsAndItsHotWindowSurroundsThem() {
        CompletionTimes t = new CompletionTimes();
        for (int i = 0; i < CompletionTimes.LEARNED_AFTER - 1; i++) {
            t.record(200_000);
        }
        assertThat(t.learned()).isFalse();
        t.record(200_000);
        assertThat(t.learned()).isTrue();
        assertThat(t.hotFrom()).isLessThan(200_000).isGreaterThan(100_000);
        assertThat(t.hotUntil()).isGreaterThan(200_000).isLessThan(400_000);
    }

    @Test
    void theWindowFollowsASourceWhoseCompletionTimesChange() {
        CompletionTimes t = learnedAround(200_000, 64);
        for (int i = 0; i < 4 * CompletionTimes.DECAY_AT; i++) {
            t.record(5_000_000);
        }
        assertThat(t.hotFrom()).isGreaterThan(2_000_000);
        assertThat(t.hotUntil()).isGreaterThan(5_000_000);
    }

    /**
     * Issue 15, measured on the H200: 10 ms kernels run after 1,500 waits of 1 ms on the same source were seen
     * 1.01–1.02× a raw BlockingSync event, because the window still spanned 1 ms … 10 ms (halving every 512 samples
     * takes hundreds of waits to forget); a source that changes at once is followed within a few dozen waits.
     */
    @Test
    void aSourceThatChangesAtOnceIsFollowedWithinAFewDozenCompletions() {
        CompletionTimes t = learnedAround(1_000_000, 1_500); // 1 ms kernels
        int n = 0;
        while (!(t.hotFrom() > 5_000_000 && t.hotUntil() > 10_000_000) && n < 1_000) {
            t.record(10_000_000 + (n % 5) * 100_000L); // then 10 ms ones
            n++;
        }
        assertThat(n).as("completions until the window surrounds 10 ms only").isLessThanOrEqualTo(2 * CompletionTimes.SHIFT_AFTER);
        assertThat(AdaptiveProbePass.closeWatch(t)).as("narrow again: watched closely").isTrue();
        for (int i = 0; i < 200; i++) {
            t.record(i % 10 == 0 ? 30_000_000 : 10_000_000); // a stray slow one now and then changes nothing
        }
        assertThat(t.hotFrom()).isGreaterThan(5_000_000);
    }

    /**
     * Measured in CudaLatency on the H200 and reproduced here: a source that had seen only a few dozen short
     * completions (1 µs kernels, inside the spin) and then ran 10 ms kernels never learned them, because each new
     * sample counted at once and within a few the 95th percentile stretched the window over both lengths (16 µs …
     * 12 ms: wide, never watched closely, and the new samples no longer "outside"); every later wait paid the
     * callback's lateness.
     */
    @Test
    void aYoungSourceThatChangesAtOnceIsFollowedToo() {
        CompletionTimes t = learnedAround(20_000, 20); // a few dozen short waits
        int n = 0;
        while (!(t.hotFrom() > 5_000_000 && t.hotUntil() > 10_000_000) && n < 1_000) {
            t.record(10_000_000 + (n % 5) * 100_000L);
            n++;
        }
        assertThat(n).as("completions until the window surrounds 10 ms only").isLessThanOrEqualTo(2 * CompletionTimes.SHIFT_AFTER);
        assertThat(AdaptiveProbePass.closeWatch(t)).as("narrow: watched closely").isTrue();
    }

    /**
     * Found by LateCallbackWatchTest under load (three JVMs on two cores): forty 20 µs waits, slowed by the load to
     * anything from 20 µs to 15 ms, taught a window of 86 µs … 15.7 ms; the 5 ms waits that followed fell inside it,
     * so no shift was seen, and the window stayed wide for good: watched only at a quarter of their age, about half
     * of those waits were left to their callback. A wide source that settles on one length is watched closely again.
     */
    @Test
    void aWideSourceThatSettlesInsideItsWindowIsWatchedClosely() {
        CompletionTimes t = new CompletionTimes();
        long[] noisy = {20_000, 90_000, 25_000, 15_000_000, 40_000, 300_000, 22_000, 2_000_000, 60_000, 8_000_000};
        for (int i = 0; i < 40; i++) {
            t.record(noisy[i % noisy.length]);
        }
        assertThat(AdaptiveProbePass.closeWatch(t)).as("learned wide").isFalse();
        int n = 0;
        while (!AdaptiveProbePass.closeWatch(t) && n < 1_000) {
            t.record(5_000_000 + (n % 5) * 50_000L); // then one length, inside that window
            n++;
        }
        assertThat(n).as("completions until the window is narrow").isLessThanOrEqualTo(CompletionTimes.SHIFT_AFTER);
        assertThat(t.hotFrom()).as("around the new length").isGreaterThan(2_000_000);
        assertThat(t.hotUntil()).isGreaterThan(5_200_000);
    }

    /**
     * On a busy machine a few waits of a source that changed are still seen at the old ages (measured here: one such
     * sample in a run kept the window stretched over both lengths in one run of twelve); a stray sample inside the
     * window does not end the run of samples outside it.
     */
    @Test
    void aStraySampleAtTheOldAgesDoesNotHoldBackAShift() {
        CompletionTimes t = learnedAround(20_000, 20);
        for (int i = 0; i < CompletionTimes.SHIFT_AFTER; i++) {
            t.record(5_000_000 + (i % 5) * 50_000L);
            if (i % 5 == 2) {
                t.record(20_000); // one at the old age now and then
            }
        }
        assertThat(t.hotFrom()).as("the window moved to the new length").isGreaterThan(2_000_000);
        assertThat(AdaptiveProbePass.closeWatch(t)).isTrue();
    }

    @Test
    void anOutlierRunShorterThanAShiftJoinsTheHistogramAndLeavesTheWindowWhereItWas() {
        CompletionTimes t = learnedAround(1_000_000, 64);
        long from = t.hotFrom();
        long until = t.hotUntil();
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < CompletionTimes.SHIFT_AFTER - 1; i++) {
                t.record(50_000_000); // a run of slow ones, one short of a shift
            }
            for (int i = 0; i < CompletionTimes.RUN_ENDS_AFTER; i++) {
                t.record(1_000_000); // then usual ones, enough to end the run
            }
        }
        assertThat(t.hotFrom()).as("the window still opens where the usual completions are").isEqualTo(from);
        assertThat(t.hotUntil()).as("and the outliers, counted, stretched its end").isGreaterThan(until);
    }

    /** A source that has counted 2^31 samples (hours of a busy one) stays learned and keeps following its waits. */
    @Test
    void aSourceOfBillionsOfSamplesStaysLearnedAndKeepsItsWindowCurrent() throws Exception {
        CompletionTimes t = learnedAround(1_000_000, 64);
        java.lang.reflect.Field samples = CompletionTimes.class.getDeclaredField("samples");
        samples.setAccessible(true);
        samples.setInt(t, Integer.MAX_VALUE - 2);
        for (int i = 0; i < 4 * CompletionTimes.DECAY_AT; i++) {
            t.record(20_000_000); // past the old count's end, and a new length
        }
        assertThat(t.learned()).isTrue();
        assertThat(t.hotFrom()).as("the window followed the new length").isGreaterThan(5_000_000);
    }

    @Test
    void bucketsAreOrderedAndTheirBoundsWithinAQuarter() {
        int last = -1;
        for (long v = 1; v < 1L << 40; v = v * 5 / 4 + 1) {
            int b = CompletionTimes.bucket(v);
            assertThat(b).isGreaterThanOrEqualTo(last);
            assertThat(CompletionTimes.lowerBound(b)).isLessThanOrEqualTo(v);
            if (v >= 4) {
                assertThat(CompletionTimes.lowerBound(b + 1)).isGreaterThan(v);
                assertThat((double) v / CompletionTimes.lowerBound(b)).isLessThan(1.25 + 1e-9);
            }
            last = b;
        }
    }

    @Test
    void aLearnedSourcesWaitSleepsBeforeItsWindowIsProbedInsideItAndBacksOffAfter() {
        CompletionTimes t = learnedAround(200_000, 32);
        PendingWait w = newWait();
        long start = w.startNanos;
        long early = start + t.hotFrom() / 2;
        assertThat(AdaptiveProbePass.nextProbe(w, t, early, SPIN)).as("before the window: at its start")
                .isEqualTo(start + t.hotFrom());
        long inside = start + (t.hotFrom() + t.hotUntil()) / 2;
        assertThat(AdaptiveProbePass.nextProbe(w, t, inside, SPIN) - inside).as("inside: (almost) every pass")
                .isLessThanOrEqualTo(AdaptiveProbePass.hotInterval(t.hotFrom())).isLessThan(10_000);
        long late = start + t.hotUntil() + 400_000;
        long lateNext = AdaptiveProbePass.nextProbe(w, t, late, SPIN);
        long later = start + t.hotUntil() + 40_000_000;
        long laterNext = AdaptiveProbePass.nextProbe(w, t, later, SPIN);
        assertThat(lateNext - late).isPositive().isLessThanOrEqualTo(AdaptiveProbePass.MAX_COLD);
        assertThat(laterNext - later).isPositive();
        long aligned = 1L << 40; // a multiple of every cold interval: the offset to the next probe is the interval itself
        assertThat(AdaptiveProbePass.coldNext(aligned, 40_000_000) - aligned).as("the longer overdue, the rarer")
                .isGreaterThan(AdaptiveProbePass.coldNext(aligned, 400_000) - aligned);
        assertThat(AdaptiveProbePass.belongsCold(wWith(w, t), late, SPIN)).isFalse();
        assertThat(AdaptiveProbePass.belongsCold(wWith(w, t), later, SPIN)).isTrue();
    }

    private static PendingWait wWith(PendingWait w, CompletionTimes t) {
        w.polled.probeTimes = t;
        return w;
    }

    @Test
    void aLongKernelsWindowIsPolledNotSpun() {
        CompletionTimes t = learnedAround(10_000_000, 32); // 10 ms
        long interval = AdaptiveProbePass.hotInterval(t.hotFrom());
        assertThat(interval).isGreaterThan(50_000).isLessThan(t.hotFrom() / 32);
        assertThat(AdaptiveProbePass.hotInterval(learnedAround(100_000, 32).hotFrom()))
                .as("a 100 µs kernel: probed every µs or so, i.e. spun on").isLessThan(2_000);
    }

    @Test
    void anUnlearnedSourcesWaitIsSpunOnForTheBudgetThenProbedMoreRarelyWithAge() {
        CompletionTimes t = new CompletionTimes();
        PendingWait w = newWait();
        long start = w.startNanos;
        assertThat(AdaptiveProbePass.nextProbe(w, t, start + SPIN / 2, SPIN)).isEqualTo(start + SPIN / 2);
        long a = start + 2 * SPIN;
        long b = start + 100 * SPIN;
        assertThat(AdaptiveProbePass.nextProbe(w, t, a, SPIN) - a).isBetween(1L, AdaptiveProbePass.MIN_COLD);
        assertThat(AdaptiveProbePass.nextProbe(w, t, b, SPIN) - b).isBetween(1L, AdaptiveProbePass.MAX_COLD);
        long aligned = 1L << 40; // a multiple of every cold interval: the offset to the next probe is the interval itself
        assertThat(AdaptiveProbePass.coldNext(aligned, b - start) - aligned).as("older, rarer")
                .isGreaterThan(AdaptiveProbePass.coldNext(aligned, a - start) - aligned);
        assertThat(AdaptiveProbePass.belongsCold(w, a, SPIN)).isFalse();
        assertThat(AdaptiveProbePass.belongsCold(w, start + 10_000_000, SPIN)).isTrue();
    }

    @Test
    void aSpinThenCallbackWaitIsProbedOnEveryPassAndNeverCold() {
        PendingWait w = newWait();
        w.polled.handOverTo = new CallbackStrategy(Runnable::run);
        long now = System.nanoTime();
        assertThat(AdaptiveProbePass.nextProbe(w, learnedAround(1_000_000, 32), now, SPIN)).isEqualTo(now);
        assertThat(AdaptiveProbePass.belongsCold(w, now + 1_000_000_000L, SPIN)).isFalse();
    }

    @Test
    void aHandedOverWaitIsWatchedCoarselyBeforeANarrowWindowCloselyInsideItAndDroppedAfterIt() {
        CompletionTimes narrow = learnedAround(1_000_000, 32); // 1 ms ± 10 %
        PendingWait w = newWait();
        long start = w.startNanos;
        long before = start + narrow.hotFrom() / 4;
        long next = AdaptiveProbePass.watchNext(w, narrow, before);
        assertThat(next).as("before the window: coarse, and no later than where it opens")
                .isGreaterThan(before).isLessThanOrEqualTo(start + narrow.hotFrom());
        long inside = start + (narrow.hotFrom() + narrow.hotUntil()) / 2;
        assertThat(AdaptiveProbePass.watchNext(w, narrow, inside) - inside).as("inside: closer than a probe-only wait")
                .isLessThanOrEqualTo(AdaptiveProbePass.hotInterval(narrow.hotFrom()) / 4);
        assertThat(AdaptiveProbePass.watchUntil(narrow)).isGreaterThanOrEqualTo(narrow.hotUntil());
        CompletionTimes far = learnedAround(50_000_000, 32);
        assertThat(AdaptiveProbePass.watchUntil(far)).as("watched until a long source's window closes")
                .isEqualTo(far.hotUntil());
        CompletionTimes unlearned = new CompletionTimes();
        assertThat(AdaptiveProbePass.watchUntil(unlearned)).isEqualTo(AdaptiveProbePass.WATCH_AT_LEAST);
        long age = 1_000_000;
        assertThat(AdaptiveProbePass.watchNext(w, unlearned, start + age) - (start + age))
                .as("an unlearned source: a quarter of its age or so").isBetween(1L, age / 2);
        CompletionTimes wide = new CompletionTimes();
        for (int i = 0; i < 64; i++) {
            wide.record(i % 2 == 0 ? 100_000 : 10_000_000); // 100 µs or 10 ms: a window 100 × as long as its start
        }
        assertThat(AdaptiveProbePass.closeWatch(wide)).as("a wide window is not spun through").isFalse();
        assertThat(AdaptiveProbePass.closeWatch(narrow)).isTrue();
    }

    @Test
    void coldProbesOfSimilarAgesLandOnTheSameInstant() {
        long now = 123_456_789L;
        long x = AdaptiveProbePass.coldNext(now, 3_000_000);
        long y = AdaptiveProbePass.coldNext(now + 1_000, 3_100_000);
        assertThat(x).isEqualTo(y).isGreaterThan(now);
    }

    @Test
    void theColdListsIntervalGrowsWithTheCostOfItsPassWithinItsBounds() {
        assertThat(AdaptiveProbePass.coldInterval(0)).isBetween(AdaptiveProbePass.COLD_MIN_INTERVAL,
                AdaptiveProbePass.COLD_MAX_INTERVAL);
        assertThat(AdaptiveProbePass.coldInterval(40_000)).isGreaterThan(AdaptiveProbePass.coldInterval(0));
        assertThat(AdaptiveProbePass.coldInterval(10_000_000)).isEqualTo(AdaptiveProbePass.COLD_MAX_INTERVAL);
        double share = (40_000.0 + AdaptiveProbePass.WAKE_NANOS) / AdaptiveProbePass.coldInterval(40_000);
        assertThat(share).isLessThanOrEqualTo(AdaptiveProbePass.COLD_SHARE + 1e-9);
    }

    /**
     * A wait that went cold while its source was unlearned comes back to the active list once the source learns a
     * window around its age, and the pass's next-due time covers it: the poller sleeps until then, not for ever. (With
     * the active list empty during the pass and every cold wait moved back, the next-due time stayed "never": the
     * poller parked with waits due, and they timed out with their fds readable — 25–116 of 200 eventfd waits in 3 s on
     * this box, and the spring-mvc consumer's 504s.)
     */
    @Test
    void aColdWaitMovedBackToTheActiveListIsCountedInWhenThePollerWakesNext() throws InterruptedException {
        PendingWait w = newWait();
        java.util.HashMap<Class<?>, CompletionTimes> sources = new java.util.HashMap<>();
        java.util.ArrayList<PendingWait> active = new java.util.ArrayList<>(java.util.List.of(w));
        java.util.ArrayList<PendingWait> cold = new java.util.ArrayList<>();
        AdaptiveProbePass.Outcome out = new AdaptiveProbePass.Outcome();
        Thread.sleep(10); // unlearned and 10 ms old: past its spin budget by far, so it goes cold
        AdaptiveProbePass.run(active, cold, sources, SPIN, out, x -> false);
        assertThat(cold).containsExactly(w);
        assertThat(active).isEmpty();
        assertThat(out.nextDue).as("nothing left on the active list").isEqualTo(Long.MAX_VALUE);

        CompletionTimes t = sources.get(w.waiter.getClass()); // the source then learns completions at about 1 s
        for (int i = 0; i < CompletionTimes.LEARNED_AFTER * 4; i++) {
            t.record(1_000_000_000L + (i % 5) * 20_000_000L);
        }
        assertThat(t.learned()).isTrue();
        AdaptiveProbePass.runCold(cold, active, sources, SPIN, x -> false, out);
        assertThat(active).as("before its window now: no longer cold").containsExactly(w);
        assertThat(cold).isEmpty();
        assertThat(out.nextDue).as("the poller wakes for it").isEqualTo(w.polled.nextProbeNanos)
                .isEqualTo(w.startNanos + t.hotFrom());
    }

    /**
     * Issue 27: a source also learns from completions that callbacks report on another thread (the age of a
     * handed-over wait), while its poller reads the window. Read between becoming learned and getting its bounds
     * (the unlearned Long.MAX_VALUE … Long.MIN_VALUE), the window looked narrow, a watched wait's next probe
     * (its start + hotFrom()) overflowed, and the poller parked for 2^63 ns with hundreds of waits in its list
     * (OpenClThroughEngineTest, about one run in fifty under load). A source seen learned is seen with its window,
     * and every next probe it gives lands between the wait's start and a second from now.
     */
    @Test
    void aSourceSeenLearnedFromAnotherThreadIsSeenWithItsWindowAndSchedulesNoWaitOutOfRange() throws Exception {
        AtomicReference<CompletionTimes> learning = new AtomicReference<>();
        AtomicReference<String> seen = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        PendingWait w = newWait();
        Thread poller = Thread.ofPlatform().name("reads-the-window").start(() -> {
            while (!stop.get() && seen.get() == null) {
                CompletionTimes t = learning.get();
                if (t == null || !t.learned()) {
                    continue;
                }
                long now = System.nanoTime();
                long next = AdaptiveProbePass.watchNext(w, t, now);
                if (t.hotFrom() == Long.MAX_VALUE || t.hotUntil() == Long.MIN_VALUE
                        || next - w.startNanos < 0 || next - now > 1_000_000_000L) {
                    seen.compareAndSet(null, "learned, window " + t.hotFrom() + " … " + t.hotUntil()
                            + ", next probe in " + (next - now) + " ns");
                }
            }
        });
        for (int i = 0; i < 50_000 && seen.get() == null; i++) {
            CompletionTimes t = new CompletionTimes();
            learning.set(t);
            for (int k = 0; k < CompletionTimes.LEARNED_AFTER; k++) {
                t.record(2_000_000 + k * 1_000L); // as a callback thread would, while the poller reads
            }
        }
        stop.set(true);
        poller.join();
        assertThat(seen.get()).as("what the poller's thread read").isNull();
    }

    /**
     * The same race through the pass itself, as the engine had it: watched waits of one source go through pass after
     * pass while another thread records that source's first completions. Before the fix a pass during the window's
     * first recompute gave a next-due time 2^63 ns away, and the poller slept on it; now every pass that leaves waits
     * behind wants its next one within a second.
     */
    @Test
    void passesOverASourceLearningOnAnotherThreadNeverPutTheirNextPassOutOfRange() throws Exception {
        AtomicReference<CompletionTimes> learning = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread callbacks = Thread.ofPlatform().name("records-completions").start(() -> {
            long age = 1_000_000;
            while (!stop.get()) {
                CompletionTimes t = learning.get();
                if (t != null) {
                    t.record(age += 1_000);
                }
            }
        });
        try {
            long until = System.nanoTime() + 2_000_000_000L;
            for (int round = 0; round < 2_000 && System.nanoTime() - until < 0; round++) {
                CompletionTimes source = new CompletionTimes();
                java.util.ArrayList<PendingWait> active = new java.util.ArrayList<>();
                for (int i = 0; i < 32; i++) {
                    PendingWait w = newWait();
                    w.polled.handOverTo = new CallbackStrategy(Runnable::run);
                    w.polled.probeTimes = source;
                    active.add(w);
                }
                AdaptiveProbePass.Outcome pass = new AdaptiveProbePass.Outcome();
                AdaptiveProbePass.run(active, new java.util.ArrayList<>(), java.util.Map.of(), 0, pass,
                        ProbePass.Prober.DIRECT); // past their (zero) spin budget: handed over, watched
                learning.set(source);
                for (int i = 0; i < 200 && !active.isEmpty(); i++) {
                    AdaptiveProbePass.run(active, new java.util.ArrayList<>(), java.util.Map.of(), 0, pass,
                            ProbePass.Prober.DIRECT);
                    if (!active.isEmpty()) {
                        assertThat(pass.nextDue - System.nanoTime()).as("the next pass, round %d", round)
                                .isLessThan(1_000_000_000L);
                    }
                }
            }
        } finally {
            stop.set(true);
            callbacks.join();
        }
    }
}
