package io.gpusync.reactor.soak;

import io.gpusync.SyncTimeoutException;
import io.gpusync.reactor.SyncEngine;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Every wait the soak subscribes, with what it must do: end exactly once (or be cancelled), by its deadline, with
 * the outcome its scenario implies unless something disturbed it (its handle closed, a failure injected, its
 * engine disposed). A watchdog calls {@link #findOverdue} to name waits that never ended.
 */
final class Ledger {
    /** What a wait must end with when nothing disturbs it. */
    enum Expect { COMPLETE, TIMEOUT, ANY }

    private final Map<Long, Wait> live = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final long graceNanos;
    final LongAdder subscribed = new LongAdder();
    final LongAdder completed = new LongAdder();
    final LongAdder timedOut = new LongAdder();
    final LongAdder failed = new LongAdder();
    final LongAdder cancelled = new LongAdder();
    final LongAdder doubleEnds = new LongAdder();
    final LongAdder wrongOutcomes = new LongAdder();
    /** Waits that timed out where completion was expected, but whose signal the soak never started (its own stall). */
    final LongAdder notSignalled = new LongAdder();
    /**
     * Waits without a timeout still unsignalled at their nominal bound: the soak's signal for them is held up (a
     * signalling thread stuck in a driver call), so nothing the engine does could end them. A problem, not a loss.
     */
    final LongAdder heldUp = new LongAdder();
    final LongAdder lost = new LongAdder();
    final LongAdder lateEnds = new LongAdder();
    final AtomicLong maxLateNanos = new AtomicLong();
    final List<String> problems = new CopyOnWriteArrayList<>();
    private final AtomicInteger problemCount = new AtomicInteger();
    private volatile long lastDumpNanos = System.nanoTime() - 60_000_000_000L;

    Ledger(long graceNanos) {
        this.graceNanos = graceNanos;
    }

    /** A new wait ending by {@code boundNanos} from now (plus the grace) and calling {@code onEnd} once. */
    Wait open(String what, SyncEngine engine, Expect expect, int expectedItems, long boundNanos, Runnable onEnd) {
        Wait w = new Wait(ids.incrementAndGet(), what, engine, expect, expectedItems,
                System.nanoTime() + boundNanos + graceNanos, onEnd);
        live.put(w.id, w);
        subscribed.increment();
        return w;
    }

    int liveCount() {
        return live.size();
    }

    void problem(String p) {
        if (problemCount.incrementAndGet() <= 60) {
            problems.add(p);
            System.err.println("SOAK PROBLEM " + p);
        }
    }

    int problemCount() {
        return problemCount.get();
    }

    /** Counts and names waits past their deadline; dumps every thread's stack (at most every 30 s). */
    void findOverdue(PrintStream out) {
        long now = System.nanoTime();
        boolean any = false;
        for (Wait w : live.values()) {
            if (w.endsOnlyByCancel) { // nothing bounds it before the soak's cancel, which takes it out of the live set
                continue;
            }
            if (now - w.deadline > 0 && w.reportedLost.compareAndSet(false, true)) {
                any = true;
                String signal = w.signalledAt != 0 ? "signalled " + (now - w.signalledAt) / 1_000_000 + " ms ago"
                        : w.signalStarted ? "its signal call has not returned" : "its signal has not started";
                if (w.unbounded && w.signalledAt == 0) {
                    heldUp.increment();
                    problem("held-up signal: " + w.what + " (#" + w.id + "), no timeout, " + signal
                            + " " + (now - w.openedAt) / 1_000_000 + " ms after subscription, engine " + w.engine);
                } else {
                    lost.increment();
                    problem("lost wait: " + w.what + " (#" + w.id + (w.unbounded ? ", no timeout" : "") + "), "
                            + (now - w.deadline) / 1_000_000
                            + " ms past its deadline, " + signal + ", engine " + w.engine);
                }
            }
        }
        if (any && now - lastDumpNanos > 30_000_000_000L) {
            lastDumpNanos = now;
            dumpThreads(out);
        }
    }

    static void dumpThreads(PrintStream out) {
        out.println("SOAK THREAD DUMP");
        for (Map.Entry<Thread, StackTraceElement[]> t : Thread.getAllStackTraces().entrySet()) {
            out.println("\"" + t.getKey().getName() + "\" " + t.getKey().getState());
            for (StackTraceElement f : t.getValue()) {
                out.println("\tat " + f);
            }
        }
        out.flush();
    }

    /** One subscribed wait; it is its own subscriber, so a second terminal signal is seen, not swallowed. */
    final class Wait implements CoreSubscriber<Object> {
        final long id;
        final String what;
        final SyncEngine engine;
        final Expect expect;
        final int expectedItems;
        final Runnable onEnd;
        final AtomicInteger ends = new AtomicInteger();
        final AtomicInteger items = new AtomicInteger();
        final AtomicBoolean over = new AtomicBoolean();
        final AtomicBoolean reportedLost = new AtomicBoolean();
        volatile long deadline;
        volatile long signalledAt;
        /** Subscribed without a timeout: only its signal (or a cancel) bounds it. */
        volatile boolean unbounded;
        /** Subscribed without a timeout, to be cancelled by the soak: only that cancel (when it runs) ends it. */
        volatile boolean endsOnlyByCancel;
        /** Whether the soak has started every signal the wait needs (a call into a driver may not have returned). */
        volatile boolean signalStarted;
        final long openedAt = System.nanoTime();
        volatile boolean disturbed;
        /** Held behind other tickets' points (an in-order queue or stream): a signal does not bound it. */
        volatile boolean boundedByTimeout;
        private volatile Subscription subscription;
        private volatile boolean cancelRequested;

        Wait(long id, String what, SyncEngine engine, Expect expect, int expectedItems, long deadline, Runnable onEnd) {
            this.id = id;
            this.what = what;
            this.engine = engine;
            this.expect = expect;
            this.expectedItems = expectedItems;
            this.deadline = deadline;
            this.onEnd = onEnd;
        }

        /**
         * The point was just signalled: the wait must now end within the grace — unless it is held behind others'
         * points ({@code boundedByTimeout}), when only its timeout bounds it.
         */
        void signalledNow() {
            signalledAt = System.nanoTime();
            if (boundedByTimeout) {
                return;
            }
            long d = signalledAt + graceNanos;
            if (d - deadline < 0) {
                deadline = d;
            }
        }

        /** Every signal the wait needs is about to be given. */
        void signalling() {
            signalStarted = true;
        }

        void disturb() {
            disturbed = true;
        }

        /** Cancels the wait (the subscriber's cancel); it then needs no terminal signal. */
        void cancel() {
            cancelRequested = true;
            Subscription s = subscription;
            if (s != null) {
                s.cancel();
                if (live.remove(id) != null) {
                    cancelled.increment();
                }
                finishOnce();
            }
        }

        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
            if (cancelRequested) {
                cancel();
            }
        }

        @Override
        public void onNext(Object o) {
            items.incrementAndGet();
        }

        @Override
        public void onError(Throwable t) {
            end(t);
        }

        @Override
        public void onComplete() {
            end(null);
        }

        private void end(Throwable error) {
            if (ends.incrementAndGet() > 1) {
                doubleEnds.increment();
                problem("second terminal signal on " + what + " (#" + id + "): " + error);
                return;
            }
            long late = System.nanoTime() - deadline;
            maxLateNanos.accumulateAndGet(late, Math::max);
            if (late > 0 && !reportedLost.get()) { // ended, but after its deadline: as bad as lost for a while
                lateEnds.increment();
                problem(what + " (#" + id + ") ended " + late / 1_000_000 + " ms past its deadline"
                        + (signalledAt == 0 ? "" : ", " + (System.nanoTime() - signalledAt) / 1_000_000
                        + " ms after its signal") + ", engine " + engine);
            }
            boolean wasLive = live.remove(id) != null;
            if (!wasLive && !cancelRequested) {
                problem("terminal signal on an unknown wait " + what);
            }
            if (error == null) {
                completed.increment();
            } else if (error instanceof SyncTimeoutException) {
                timedOut.increment();
            } else {
                failed.increment();
            }
            boolean quiet = disturbed || engine.isDisposed() || cancelRequested;
            // nobody signalled it (the soak's signalling threads stuck in a driver call): its timeout is the right end
            boolean unsignalledTimeout = expect == Expect.COMPLETE && !signalStarted
                    && error instanceof SyncTimeoutException;
            if (unsignalledTimeout) {
                notSignalled.increment();
            }
            String wrong = switch (expect) {
                case COMPLETE -> unsignalledTimeout ? null : error != null ? "expected completion, got " + error
                        : expectedItems >= 0 && items.get() != expectedItems
                        ? "expected " + expectedItems + " items, got " + items.get() : null;
                case TIMEOUT -> error instanceof SyncTimeoutException ? null : "expected a timeout, got " + error;
                case ANY -> null;
            };
            if (wrong != null && !quiet) {
                wrongOutcomes.increment();
                long now = System.nanoTime();
                String timing = signalledAt == 0 ? " (no signal recorded; ended after " + (now - openedAt) / 1_000_000
                        + " ms)" : " (signalled " + (signalledAt - openedAt) / 1_000_000 + " ms after opening, ended "
                        + (now - signalledAt) / 1_000_000 + " ms after the signal)";
                problem(what + " (#" + id + "): " + wrong + timing + (error != null ? stackOf(error) : ""));
            }
            finishOnce();
        }

        private void finishOnce() {
            if (over.compareAndSet(false, true)) {
                onEnd.run();
            }
        }
    }

    private static String stackOf(Throwable t) {
        java.io.StringWriter w = new java.io.StringWriter();
        t.printStackTrace(new java.io.PrintWriter(w));
        String s = w.toString();
        return "\n" + (s.length() > 3000 ? s.substring(0, 3000) + "..." : s);
    }
}
