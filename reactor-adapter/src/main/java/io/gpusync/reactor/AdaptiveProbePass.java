package io.gpusync.reactor;

import java.util.ArrayList;
import java.util.Map;

/**
 * One pass of the adaptive spin-then-poll scheduler over a poller's waits: each wait is probed only when its
 * next probe is due, and after a probe that finds it unsignalled its next probe is set from what its source has
 * taken so far ({@link CompletionTimes}):
 * <ul>
 *   <li>a source with a learned distribution: not before its hot window (the poller may sleep until then); inside
 *       it every {@link #hotInterval} — about 1/64 of the age where the window opens, so the poller spins for short
 *       kernels and polls a few dozen times across long ones; after it, overdue, at {@link #coldInterval};</li>
 *   <li>a source not learned yet: every pass for the spin budget, then at {@link #coldInterval} of its age;</li>
 *   <li>a spin-then-callback wait: every pass, until its budget is spent and the callback path takes it — unless
 *       its source has a narrow window that is not over yet ({@link #holdsHandOver}): then the poller keeps it
 *       without a callback through that window (the callback, a stream callback for CUDA, is registered only for
 *       the waits the window missed). A handed-over wait stays <em>watched</em> by the poller, which may see the signal before the callback does: at
 *       {@link #coldNext} intervals (a quarter of its age) until {@link #WATCH_AT_LEAST} or its source's window
 *       closes, and, when that source's window is {@link CompletionTimes#narrow() narrow}, every {@link #watchInterval}
 *       inside it — a quarter of a probe-only wait's interval. Whichever sees the signal first completes the
 *       wait; its age teaches the source either way.</li>
 * </ul>
 * (Why: on some drivers a callback arrives well after the status changes, while a probe in the right window sees
 * the completion at once. The coarse watch before the window keeps what the source learns honest: ages seen by
 * late callbacks alone would put the window after the completions it should surround.)
 * Cold intervals are powers of two of nanoseconds, and cold probe times multiples of their interval, so that
 * waits of similar ages are probed in the same pass (one wake-up of the poller for many of them).
 */
final class AdaptiveProbePass {
    /** Shortest cold interval (≈ 16 µs). */
    static final long MIN_COLD = 1L << 14;
    /**
     * A wait whose next cold probe is this far off (≈ 1 ms) leaves the poller's list for its cold list, which is
     * probed as a whole at intervals that keep it under {@link #COLD_SHARE} of a core (see {@link #coldInterval}).
     */
    static final long MAX_COLD = 1L << 20;
    /** A handed-over wait is watched (coarsely at least) until this age, or its source's window closes if later. */
    static final long WATCH_AT_LEAST = 4 * MAX_COLD;
    /** The share of a core the cold list may take: its probes and the poller's wake-up for them. */
    static final double COLD_SHARE = 0.004;
    /**
     * What a poller's wake-up is assumed to cost besides its probes (timed park, timer interrupt, context
     * switches, cache refill), in the poller's CPU time; a virtual machine, where a timer costs exits, is the bound.
     */
    static final long WAKE_NANOS = 60_000;
    /** Bounds of the cold list's probe interval: 1 ms … 32 ms. */
    static final long COLD_MIN_INTERVAL = 1_000_000;
    static final long COLD_MAX_INTERVAL = 32_000_000;

    private AdaptiveProbePass() {
    }

    /** What a pass found. */
    static final class Outcome {
        int completions;
        /** The earliest time a remaining wait wants its next probe ({@code Long.MAX_VALUE} if none remain). */
        long nextDue;
    }

    /**
     * @param sources     the poller's sources, by waiter class (grown here)
     * @param spinBudget  how long a wait of an unlearned source is probed on every pass
     * @param probes      how to probe a wait (a poller's guarded probe)
     */
    static void run(ArrayList<PendingWait> waits, ArrayList<PendingWait> cold, Map<Class<?>, CompletionTimes> sources,
                    long spinBudget, Outcome out, ProbePass.Prober probes) {
        int completions = 0;
        long now = System.nanoTime();
        long nextDue = Long.MAX_VALUE;
        for (int i = waits.size() - 1; i >= 0; i--) {
            PendingWait w = waits.get(i);
            boolean remove = w.isDone();
            if (!remove && w.polled.nextProbeNanos - now > 0) {
                nextDue = Math.min(nextDue, w.polled.nextProbeNanos);
                continue;
            }
            if (!remove) {
                try {
                    if (probes.isSignaled(w)) {
                        CompletionTimes t = source(w, sources);
                        boolean learnsThemselves = w.polled.learnsAfterHandOver == null;
                        w.signalled(); // a watched wait records its own age there, if this call completed it
                        if (learnsThemselves) {
                            t.record(now - w.startNanos);
                        }
                        completions++;
                        remove = true;
                    } else if (w.polled.handOverTo != null && now - w.startNanos > w.polled.handOverAfterNanos) {
                        CompletionTimes t = source(w, sources);
                        if (!holdsHandOver(t, now - w.startNanos)) {
                            w.polled.learnsAfterHandOver = t;
                            ProbePass.handOver(w);
                            w.polled.watched = true;
                        } // else inside a narrow window likely to see it signalled: no callback registered yet
                        if (w.isDone()) {
                            remove = true;
                        } else {
                            w.polled.nextProbeNanos = watchNext(w, t, now);
                            nextDue = Math.min(nextDue, w.polled.nextProbeNanos);
                        }
                    } else if (w.polled.watched) {
                        CompletionTimes t = source(w, sources);
                        if (now - w.startNanos > watchUntil(t)) {
                            remove = true; // past its watch: the callback has it
                        } else {
                            w.polled.nextProbeNanos = watchNext(w, t, now);
                            nextDue = Math.min(nextDue, w.polled.nextProbeNanos);
                        }
                    } else {
                        long next = nextProbe(w, source(w, sources), now, spinBudget);
                        w.polled.nextProbeNanos = next;
                        if (cold != null && belongsCold(w, now, spinBudget)) {
                            cold.add(w); // probed with the other cold waits from now on
                            remove = true;
                        } else {
                            nextDue = Math.min(nextDue, next);
                        }
                    }
                } catch (Throwable e) {
                    if (e == ProbePass.STRANDED) {
                        throw ProbePass.STRANDED; // this thread's lists are no longer its own
                    }
                    w.failed(e);
                    remove = true;
                }
            }
            if (remove) {
                swapRemove(waits, i);
            }
        }
        out.completions = completions;
        out.nextDue = nextDue;
    }

    /**
     * Past its hot window (or, unlearned, past the spin budget) by so much that its cold interval has reached
     * {@link #MAX_COLD}: completion is not likely soon, the wait goes with the cold list.
     */
    static boolean belongsCold(PendingWait w, long now, long spinBudget) {
        if (w.polled.handOverTo != null) {
            return false;
        }
        CompletionTimes t = w.polled.probeTimes;
        long age = now - w.startNanos;
        long over;
        if (t != null && t.learned()) {
            if (age <= t.hotUntil()) {
                return false;
            }
            over = age - t.hotUntil();
        } else {
            if (age < spinBudget) {
                return false;
            }
            over = age;
        }
        return Long.highestOneBit(over >>> 2) >= MAX_COLD;
    }

    /**
     * One pass over the cold list: every wait probed (completions and failures leave it, a wait whose source now
     * says it is due soon goes back to {@code active}, and {@code out}'s {@link Outcome#nextDue} is brought forward
     * to its next probe: the poller sleeps until the earliest wait of either list is due, and a wait moved back after
     * the pass over {@code active} must count too, or the poller could sleep past it).
     *
     * @return completions
     */
    static int runCold(ArrayList<PendingWait> cold, ArrayList<PendingWait> active,
                       Map<Class<?>, CompletionTimes> sources, long spinBudget, ProbePass.Prober probes, Outcome out) {
        int completions = 0;
        long now = System.nanoTime();
        for (int i = cold.size() - 1; i >= 0; i--) {
            PendingWait w = cold.get(i);
            boolean remove = w.isDone();
            if (!remove) {
                try {
                    if (probes.isSignaled(w)) {
                        w.signalled();
                        source(w, sources).record(now - w.startNanos);
                        completions++;
                        remove = true;
                    } else {
                        long next = nextProbe(w, source(w, sources), now, spinBudget);
                        if (!belongsCold(w, now, spinBudget)) {
                            w.polled.nextProbeNanos = next;
                            out.nextDue = Math.min(out.nextDue, next);
                            active.add(w);
                            remove = true;
                        }
                    }
                } catch (Throwable e) {
                    if (e == ProbePass.STRANDED) {
                        throw ProbePass.STRANDED; // this thread's lists are no longer its own
                    }
                    w.failed(e);
                    remove = true;
                }
            }
            if (remove) {
                swapRemove(cold, i);
            }
        }
        return completions;
    }

    /** The cold list's next probe, after a pass over it that took {@code passNanos}. */
    static long coldInterval(long passNanos) {
        return Math.min(COLD_MAX_INTERVAL, Math.max(COLD_MIN_INTERVAL, (long) ((passNanos + WAKE_NANOS) / COLD_SHARE)));
    }

    private static CompletionTimes source(PendingWait w, Map<Class<?>, CompletionTimes> sources) {
        CompletionTimes t = w.polled.probeTimes;
        if (t == null) {
            t = sources.computeIfAbsent(w.waiter.getClass(), c -> new CompletionTimes());
            w.polled.probeTimes = t;
        }
        return t;
    }

    /** When to probe {@code w} next, having found it unsignalled at {@code now}. */
    static long nextProbe(PendingWait w, CompletionTimes times, long now, long spinBudget) {
        if (w.polled.handOverTo != null) {
            return now; // spin-then-callback: spun on for its budget
        }
        long age = now - w.startNanos;
        if (times.learned()) {
            long from = times.hotFrom();
            if (age < from) {
                return w.startNanos + from;
            }
            if (age <= times.hotUntil()) {
                return now + hotInterval(from);
            }
            return coldNext(now, age - times.hotUntil());
        }
        if (age < spinBudget) {
            return now;
        }
        return coldNext(now, age);
    }

    /**
     * Whether a spin-then-callback wait of age {@code age}, past its spin budget, is kept on the poller without a
     * callback for now: its source's window is narrow ({@link #closeWatch}) and not over yet, so the poller is likely
     * to see the signal first, and registering the callback — for CUDA a stream callback launched behind the event on
     * a stream of its own, for OpenCL a driver callback — would cost more than it brings. Past the window the wait is
     * handed over as usual.
     */
    static boolean holdsHandOver(CompletionTimes t, long age) {
        return closeWatch(t) && age <= t.hotUntil();
    }

    /** The age until which a handed-over wait of {@code t}'s source is watched. */
    static long watchUntil(CompletionTimes t) {
        return t.learned() ? Math.max(WATCH_AT_LEAST, t.hotUntil()) : WATCH_AT_LEAST;
    }

    /** Whether {@code t}'s window is narrow enough to be watched closely. */
    static boolean closeWatch(CompletionTimes t) {
        return t.narrow(); // a wide one: the poller would spin through most of every wait; the callback does better
    }

    /**
     * A watched wait's next probe: inside a narrow window, a {@link #watchInterval} on; else a quarter of its age on
     * ({@link #coldNext}), but no later than where a narrow window opens.
     */
    static long watchNext(PendingWait w, CompletionTimes t, long now) {
        long age = now - w.startNanos;
        long coarse = coldNext(now, age);
        if (!closeWatch(t)) {
            return coarse;
        }
        long from = t.hotFrom();
        if (age < from) {
            return Math.min(coarse, w.startNanos + from);
        }
        return now + watchInterval(from);
    }

    /** A watched wait inside its window: a quarter of {@link #hotInterval} (every pass below ≈ 256 µs). */
    static long watchInterval(long hotFrom) {
        return hotInterval(hotFrom) >>> 2;
    }

    /** Inside the hot window: 1/64 of where it opens (power of two; 0 = every pass below ≈ 64 µs). */
    static long hotInterval(long hotFrom) {
        long i = Long.highestOneBit(hotFrom >>> 6);
        return i < 1_000 ? 0 : i;
    }

    /** Overdue by {@code over}: the next multiple of a quarter of it (power of two, MIN_COLD … MAX_COLD; beyond
     * that the wait joins the cold list). */
    static long coldNext(long now, long over) {
        long interval = Math.min(MAX_COLD, Math.max(MIN_COLD, Long.highestOneBit(Math.max(1, over >>> 2))));
        return now - Math.floorMod(now, interval) + interval;
    }

    /** Removes element {@code i} in O(1) by moving the last one into its place (the order of waits does not matter). */
    private static void swapRemove(java.util.List<PendingWait> list, int i) {
        int last = list.size() - 1;
        list.set(i, list.get(last));
        list.remove(last);
    }
}
