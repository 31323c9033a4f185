package io.gpusync.reactor;

/**
 * The learned completion-time distribution of one source of probe-only waits (today: one waiter class per poller
 * thread), from which the pollers decide when probing a wait is worth it: its <em>hot window</em>, from a little
 * before the 5th percentile of the ages at which this source's waits were seen signalled to a little after the
 * 95th. Before the window a wait is not probed at all, inside it it is probed on every pass (the poller spins),
 * after it (an overdue or idle wait) it is probed at intervals that grow with its age — see
 * {@link SpinThenPoll}.
 *
 * <p>A log-linear histogram (four sub-buckets per power of two of nanoseconds: ≤ 25 % relative error), whose
 * counts are halved every {@value #DECAY_AT} samples, so it follows a source whose kernels drift; a source that
 * changes at once (a new kernel length) shows as {@value #SHIFT_AFTER} completions outside the window (see {@link #record}),
 * and the histogram restarts from them. A source whose window is wide but whose last {@value #SHIFT_AFTER} completions
 * are {@link #narrow()} (it settled on one length inside the wide window, for instance after noisy first samples on a
 * loaded machine) restarts from those too. A source is {@link #learned()} after {@value #LEARNED_AFTER} samples since
 * it was made.
 *
 * <p><b>Threading.</b> Each poller thread owns its sources and reads their window; {@link #record} may also come
 * from another thread (a callback that completed a wait the poller handed over), so it is synchronized and the
 * window is published whole, in one volatile write. Never blocks beyond that monitor; {@link #record} is O(1) but for
 * the window's recomputation (O(buckets)) every {@value #RECOMPUTE_EVERY} samples.
 */
final class CompletionTimes {
    static final int LEARNED_AFTER = 8;
    static final int DECAY_AT = 512;
    static final int RECOMPUTE_EVERY = 4;
    private static final int BUCKETS = 64 * 4;

    /**
     * This many completions outside the learned window, with never {@value #RUN_ENDS_AFTER} in a row inside it among
     * them, mean the source has changed (a new kernel length): the histogram restarts from them, rather than taking
     * {@value #DECAY_AT}-sample halvings to follow.
     */
    static final int SHIFT_AFTER = 16;
    /** Samples in a row inside the window that end a run of samples outside it. */
    static final int RUN_ENDS_AFTER = 4;
    /**
     * A window is narrow if it ends at most this many times as late as it opens. The window's own margins (¾ of the
     * 5th percentile's bucket, 1.25 × the 95th's bucket end, buckets a quarter of a power of two wide) make even a
     * source of one fixed time up to ≈ 2.6 × as long as it opens; 8 leaves room for ≈ 3 × of real spread, so that a
     * loaded machine's jitter does not make a steady source wide.
     */
    static final long NARROW_SPREAD = 8;

    private final int[] counts = new int[BUCKETS];
    private final long[] outside = new long[SHIFT_AFTER];
    /** The last {@value #SHIFT_AFTER} samples, a ring written at {@link #recentNext}; {@link #recentCount} are filled. */
    private final long[] recent = new long[SHIFT_AFTER];
    private int recentNext;
    private int recentCount;
    private int outsideRun;
    private int insideSinceOutside;
    private int total;
    /** Samples counted (under the monitor only; saturates, so a source never unlearns). */
    private int samples;
    /** Samples counted since the window was last recomputed (once learned). */
    private int sinceRecompute;
    /**
     * The learned window, {@code null} until {@value #LEARNED_AFTER} samples: both bounds published in one write, so
     * that a poller reading it while a callback's thread records never sees a source learned without its window (each
     * bound it then reads belongs to a window this source really had).
     */
    private volatile Window window;

    /** A hot window: from {@code from} to {@code until} nanoseconds of a wait's age. */
    private record Window(long from, long until) {
    }

    /**
     * A wait of this source was seen signalled {@code ageNanos} after it started. A sample outside the learned window
     * is held aside while the run of such samples lasts: a run of {@value #SHIFT_AFTER} means the source changed and
     * the histogram restarts from it; {@value #RUN_ENDS_AFTER} samples in a row inside the window end the run, and the
     * held samples join the histogram as the outliers they were (one stray sample inside does not: on a busy machine
     * a few waits of a changed source are still seen at the old ages). Counted at once, a young source's new samples
     * would soon pass the 95th percentile and stretch the window over both the old times and the new — a wide window,
     * never watched closely, and never again "outside".
     */
    synchronized void record(long ageNanos) {
        recent[recentNext] = ageNanos;
        recentNext = (recentNext + 1) % SHIFT_AFTER;
        recentCount = Math.min(SHIFT_AFTER, recentCount + 1);
        if (recentCount >= SHIFT_AFTER && learned() && !narrow() && narrowSpan(recent)) {
            restartFrom(recent); // settled inside a wide window: watch it closely
            return;
        }
        Window w = window;
        if (w != null && (ageNanos < w.from || ageNanos > w.until)) {
            outside[outsideRun++] = ageNanos;
            insideSinceOutside = 0;
            if (outsideRun == SHIFT_AFTER) {
                restartFrom(outside);
            }
            return;
        }
        count(ageNanos);
        if (outsideRun > 0 && ++insideSinceOutside >= RUN_ENDS_AFTER) {
            for (int i = 0; i < outsideRun; i++) {
                count(outside[i]);
            }
            outsideRun = 0;
            insideSinceOutside = 0;
        }
    }

    private void count(long ageNanos) {
        counts[bucket(Math.max(1, ageNanos))]++;
        total++;
        if (samples < Integer.MAX_VALUE) {
            samples++;
        }
        if (total >= DECAY_AT) {
            total = 0;
            for (int i = 0; i < BUCKETS; i++) {
                counts[i] >>= 1;
                total += counts[i];
            }
        }
        if (samples >= LEARNED_AFTER && (++sinceRecompute >= RECOMPUTE_EVERY || samples == LEARNED_AFTER)) {
            sinceRecompute = 0;
            recompute();
        }
    }

    /** The source changed: forget what was learned and learn again from {@code recent} alone. */
    private void restartFrom(long[] recent) {
        java.util.Arrays.fill(counts, 0);
        for (long age : recent) {
            counts[bucket(Math.max(1, age))]++;
        }
        total = recent.length;
        outsideRun = 0;
        recentCount = 0;
        insideSinceOutside = 0;
        recompute(); // still learned: the recent samples are more than LEARNED_AFTER
    }

    /**
     * Whether the window is narrow ({@value #NARROW_SPREAD} × at most): worth watching closely, where a wide one is
     * left to coarse probes and callbacks.
     */
    boolean narrow() {
        Window w = window;
        return w != null
                && (w.from >= Long.MAX_VALUE / NARROW_SPREAD || w.until <= NARROW_SPREAD * Math.max(w.from, 1));
    }

    /** Whether the window of {@code ages} alone would be narrow. */
    private static boolean narrowSpan(long[] ages) {
        long min = Long.MAX_VALUE;
        long max = 0;
        for (long age : ages) {
            min = Math.min(min, age);
            max = Math.max(max, age);
        }
        return until(bucket(Math.max(1, max))) <= NARROW_SPREAD * Math.max(from(bucket(Math.max(1, min))), 1);
    }

    /** Whether enough completions were seen for {@link #hotFrom()} / {@link #hotUntil()} to mean something. */
    boolean learned() {
        return window != null;
    }

    /** The age from which a wait of this source is likely to complete soon (3/4 of the 5th percentile). */
    long hotFrom() {
        Window w = window;
        return w == null ? Long.MAX_VALUE : w.from;
    }

    /** The age past which a wait of this source is overdue (the 95th percentile's bucket end × 1.25 + 10 µs). */
    long hotUntil() {
        Window w = window;
        return w == null ? Long.MIN_VALUE : w.until;
    }

    private void recompute() {
        int lo = quantileBucket(0.05);
        int hi = quantileBucket(0.95);
        window = new Window(from(lo), until(hi));
    }

    /** Where a window whose 5th percentile falls in bucket {@code lo} opens. */
    private static long from(int lo) {
        return lowerBound(lo) / 4 * 3;
    }

    /** Where a window whose 95th percentile falls in bucket {@code hi} ends. */
    private static long until(int hi) {
        long end = lowerBound(hi + 1);
        return end + end / 4 + 10_000;
    }

    private int quantileBucket(double q) {
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts[i];
            if (seen >= Math.max(1, rank)) {
                return i;
            }
        }
        return BUCKETS - 1;
    }

    /** Four sub-buckets per power of two. */
    static int bucket(long nanos) {
        int e = 63 - Long.numberOfLeadingZeros(nanos);
        int sub = e >= 2 ? (int) ((nanos >>> (e - 2)) & 3) : 0;
        return Math.min(BUCKETS - 1, e * 4 + sub);
    }

    /** The smallest value of bucket {@code b}. */
    static long lowerBound(int b) {
        int e = b / 4;
        int sub = b % 4;
        if (e >= 62) {
            return Long.MAX_VALUE / 2;
        }
        return e >= 2 ? (long) (4 | sub) << (e - 2) : 1L << e;
    }
}
