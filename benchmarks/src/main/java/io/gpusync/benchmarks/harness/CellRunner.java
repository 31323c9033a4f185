package io.gpusync.benchmarks.harness;

import io.gpusync.benchmarks.subjects.Subject;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Measures one cell: {@code n} background waits pending on one approach, then — with them still pending —
 * idle CPU, wake latency of one extra measured wait at a time, cancel → freed of one extra wait at a time,
 * and finally a burst that signals the {@code n} background waits as fast as possible (completions/s).
 * Every phase is bounded in time; whatever was cut short is noted.
 */
final class CellRunner {
    /** How long the cancel phase spins on "freed?" before it polls in short parks (see {@link #cancel}). */
    private static final long FREED_SPIN_NANOS = 50_000;
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private final Options o;
    private final Consumer<String> progress;

    CellRunner(Options o, Consumer<String> progress) {
        this.o = o;
        this.progress = progress;
    }

    /** Full measurement. */
    CellResult run(Subject subject, String approachKey, int n) {
        return run(subject, approachKey, n, o.waitTimeout, false, "");
    }

    /**
     * @param heapOnly only subscribe, count threads and heap, then release (used for the no-timer check)
     */
    CellResult run(Subject subject, String approachKey, int n, Duration timeout, boolean heapOnly, String tag) {
        CellResult r = new CellResult(subject.name(), approachKey, n, tag);
        int extra = heapOnly ? 0 : o.latencySamples + o.cancelSamples;
        if ((long) n + extra > subject.maxLivePoints()) {
            r.skipped = true;
            r.notes.add("not run: needs " + (n + extra) + " live points, " + subject.name() + " allows "
                    + subject.maxLivePoints() + " here (ulimit -n " + io.gpusync.benchmarks.subjects.Limits.openFiles() + ")");
            return r;
        }
        String unavailable = subject.unavailableReason();
        if (unavailable != null) {
            r.skipped = true;
            r.notes.add("not run: " + unavailable);
            return r;
        }
        Supplier<Approach> factory = Approaches.byKey(approachKey);
        Subject.Stream bg;
        Subject.Stream fg;
        try {
            bg = subject.newStream();
        } catch (RuntimeException e) {
            r.skipped = true;
            r.notes.add("not run: " + subject.name() + " made no stream: " + e);
            return r;
        }
        try {
            fg = subject.newStream();
        } catch (RuntimeException e) {
            bg.close();
            r.skipped = true;
            r.notes.add("not run: " + subject.name() + " made no stream: " + e);
            return r;
        }
        Approach ap = null;
        try {
            Subject.Point[] points = new Subject.Point[n];
            for (int i = 0; i < n; i++) {
                points[i] = bg.next();
            }
            Background state = new Background(n);
            BgSub[] subs = new BgSub[n];
            long[] signalled = new long[n];
            gc();
            long heap0 = MEMORY.getHeapMemoryUsage().getUsed();
            long rss0 = rssBytes();
            int jvmThreads0 = THREADS.getThreadCount();
            ap = factory.get();

            progress.accept("subscribe " + n);
            long t0 = System.nanoTime();
            long capAt = t0 + o.subscribeCap.toNanos();
            int i = 0;
            for (; i < n; i++) {
                if ((i & 1023) == 0 && System.nanoTime() - capAt > 0) {
                    r.capped = true;
                    r.notes.add("subscribing capped after " + o.subscribeCap.toSeconds() + " s: " + i + " of " + n + " waits");
                    break;
                }
                subs[i] = new BgSub(i, state);
                ap.await(points[i].waiter(), timeout).subscribe(subs[i]);
            }
            r.subscribed = i;
            r.subscribeNanos = System.nanoTime() - t0;

            sleep(o.settle);
            r.threads = ap.threads();
            r.jvmThreadsDelta = THREADS.getThreadCount() - jvmThreads0;
            gc();
            if (r.subscribed >= 1_000) {
                r.heapPerWait = (double) (MEMORY.getHeapMemoryUsage().getUsed() - heap0) / r.subscribed;
                long rss1 = rssBytes();
                if (rss0 > 0 && rss1 > 0) {
                    r.rssPerWait = (double) (rss1 - rss0) / r.subscribed;
                }
            }
            if (!heapOnly) {
                progress.accept("idle CPU");
                long cpu0 = OS.getProcessCpuTime();
                long th0 = threadCpuNanos();
                long w0 = System.nanoTime();
                sleep(o.idleWindow);
                long th1 = threadCpuNanos();
                long w1 = System.nanoTime();
                r.idleCpuPct = 100.0 * (OS.getProcessCpuTime() - cpu0) / (w1 - w0);
                r.idleThreadCpuPct = Math.max(0, 100.0 * (th1 - th0) / (w1 - w0));

                progress.accept("latency");
                latency(ap, fg, timeout, r);
                progress.accept("cancel");
                cancel(ap, fg, timeout, r);
                progress.accept("burst " + r.subscribed);
                burst(points, signalled, state, r);
            }
            r.errors += state.errors.get();
            if (r.firstError == null) {
                r.firstError = state.firstError;
            }
        } catch (Throwable e) {
            r.notes.add("cell failed: " + e);
            e.printStackTrace();
        } finally {
            progress.accept("cleanup");
            fg.signalAll();
            bg.signalAll();
            if (ap != null) {
                long until = System.nanoTime() + 10_000_000_000L;
                while (ap.holding() > 0 && System.nanoTime() - until < 0) {
                    LockSupport.parkNanos(1_000_000);
                }
                if (ap.holding() > 0) {
                    r.notes.add(ap.holding() + " waits still held 10 s after every point was signalled");
                }
                ap.close();
            }
            fg.close();
            bg.close();
        }
        return r;
    }

    private void latency(Approach ap, Subject.Stream fg, Duration timeout, CellResult r) {
        Thread me = Thread.currentThread();
        long end = System.nanoTime() + o.latencyBudget.toNanos();
        int samples = 0;
        while (samples < o.latencySamples && System.nanoTime() - end < 0 && r.latencyMisses < 3) {
            Subject.Point p = fg.next();
            FgSub f = new FgSub(me);
            ap.await(p.waiter(), timeout).subscribe(f);
            pause(o.work);
            long t0 = System.nanoTime();
            p.signal();
            while (f.doneAt == 0 && f.error == null && System.nanoTime() - t0 < o.sampleCap.toNanos()) {
                LockSupport.parkNanos(this, o.sampleCap.toNanos());
            }
            if (f.doneAt != 0) {
                r.latency.recordValue(Math.max(0, f.doneAt - t0));
                samples++;
            } else if (f.error != null) {
                r.errors++;
                r.firstError = String.valueOf(f.error);
                r.latencyMisses++;
            } else {
                r.latencyMisses++;
            }
        }
        if (r.latencyMisses >= 3) {
            r.notes.add("latency: " + r.latencyMisses + " measured waits not complete " + o.sampleCap.toMillis()
                    + " ms after their signal (phase stopped; " + samples + " samples)");
        } else if (r.latencyMisses > 0) {
            r.notes.add("latency: " + r.latencyMisses + " measured waits not complete within " + o.sampleCap.toMillis() + " ms");
        }
    }

    private void cancel(Approach ap, Subject.Stream fg, Duration timeout, CellResult r) {
        long end = System.nanoTime() + o.cancelBudget.toNanos();
        int samples = 0;
        while (samples < o.cancelSamples && System.nanoTime() - end < 0 && r.cancelMisses < 3) {
            Subject.Point p = fg.next();
            FgSub f = new FgSub(null);
            long before = fg.registrations();
            ap.await(p.waiter(), timeout).subscribe(f);
            pause(o.work);
            long h0 = ap.holding();
            long r0 = fg.registrations();
            if (r0 <= before) {
                r0 = -1; // this wait registered nothing with the primitive (a probe-only or queued wait)
            }
            long t0 = System.nanoTime();
            f.cancel();
            long t1 = System.nanoTime();
            r.disposeCall.recordValue(t1 - t0);
            boolean freed = false;
            long now;
            while (true) {
                now = System.nanoTime();
                if (ap.holding() < h0 && (r0 < 0 || fg.registrations() < r0)) {
                    freed = true;
                    break;
                }
                if (now - t0 > o.freeCap.toNanos()) {
                    break;
                }
                if (now - t0 < FREED_SPIN_NANOS) {
                    Thread.onSpinWait();
                } else {
                    // past a short spin, poll in 10 µs parks: a measuring thread that spins for ms holds one core of
                    // a small machine and the thread being freed may wait a scheduler slice for the other
                    LockSupport.parkNanos(10_000);
                }
            }
            if (freed) {
                r.cancelFreed.recordValue(now - t0);
                samples++;
            } else {
                r.cancelMisses++;
            }
            p.signal(); // releases whatever still waits on it (a thread blocked in the native wait)
            if (!freed) {
                long until = System.nanoTime() + 1_000_000_000L;
                while (ap.holding() >= h0 && System.nanoTime() - until < 0) {
                    LockSupport.parkNanos(100_000);
                }
            }
        }
        if (r.cancelMisses > 0) {
            r.notes.add("cancel: " + r.cancelMisses + " cancelled waits not freed within " + o.freeCap.toMillis()
                    + " ms (" + (r.cancelMisses >= 3 ? "phase stopped; " : "") + samples + " freed in time)");
        }
    }

    /**
     * Every {@code BURST_SAMPLE}-th wait of a burst has its signal → completion latency timed (and the last one to
     * complete its time): two clock reads per completion (≈ 30–50 ns each under kvm-clock) would otherwise weigh on
     * the figure — serially on the signalling thread for an approach that completes in place, spread over two threads
     * for one that completes on its own thread.
     */
    static final int BURST_SAMPLE = 64;

    private void burst(Subject.Point[] points, long[] signalled, Background state, CellResult r) {
        int n = r.subscribed;
        if (n == 0) {
            return;
        }
        state.expected = n;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            if (i % BURST_SAMPLE == 0) {
                signalled[i] = System.nanoTime();
            }
            points[i].signal();
        }
        long cap = System.nanoTime() + o.burstCap.toNanos();
        while (state.completed.get() + state.errors.get() < n && System.nanoTime() - cap < 0) {
            LockSupport.parkNanos(200_000);
        }
        int completed = state.completed.get();
        long last = state.lastDoneAt;
        for (int i = 0; i < n; i++) {
            long d = state.doneAt[i];
            if (d != 0) {
                if (last == 0 || completed < n) {
                    last = Math.max(last, d);
                }
                if (signalled[i] != 0) {
                    r.burstLatency.recordValue(Math.max(0, d - signalled[i]));
                }
            }
        }
        if (last == 0) {
            last = start;
        }
        r.burstCompleted = completed;
        r.burstNanos = last - start;
        if (completed > 0 && r.burstNanos > 0) {
            r.burstPerSec = completed * 1e9 / r.burstNanos;
        }
        if (completed + state.errors.get() < n) {
            r.capped = true;
            r.notes.add("burst capped after " + o.burstCap.toSeconds() + " s: " + completed + " of " + n + " completed");
        }
    }

    static void gc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
            LockSupport.parkNanos(30_000_000);
        }
    }

    private static void sleep(Duration d) {
        long end = System.nanoTime() + d.toNanos();
        for (long left; (left = end - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left);
        }
    }

    private static void pause(Duration d) {
        sleep(d);
    }

    /**
     * CPU time of all live platform threads (ns). Threads that end during the window drop out (their time is
     * lost), so this is a lower bound; the process figure, at clock-tick resolution, is the upper check.
     */
    static long threadCpuNanos() {
        long sum = 0;
        for (long t : THREADS.getAllThreadIds()) {
            long c = THREADS.getThreadCpuTime(t);
            if (c > 0) {
                sum += c;
            }
        }
        return sum;
    }

    static long rssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("\\D+", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** Shared state of the background waits of a cell. */
    static final class Background {
        final long[] doneAt;
        final AtomicInteger completed = new AtomicInteger();
        /** Completions the burst waits for; the one that reaches it records {@link #lastDoneAt}. */
        volatile int expected = Integer.MAX_VALUE;
        volatile long lastDoneAt;
        final AtomicInteger errors = new AtomicInteger();
        volatile String firstError;

        Background(int n) {
            doneAt = new long[n];
        }
    }

    /** The subscriber of one background wait (24 bytes: counted in the heap per wait). */
    static final class BgSub implements CoreSubscriber<Void> {
        private final int index;
        private final Background state;

        BgSub(int index, Background state) {
            this.index = index;
            this.state = state;
        }

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Void v) {
        }

        @Override
        public void onError(Throwable t) {
            if (state.errors.incrementAndGet() == 1) {
                state.firstError = String.valueOf(t);
            }
        }

        @Override
        public void onComplete() {
            int c = state.completed.incrementAndGet();
            boolean last = c >= state.expected;
            if (last || index % BURST_SAMPLE == 0) { // see BURST_SAMPLE
                long t = System.nanoTime();
                state.doneAt[index] = t;
                if (last) {
                    state.lastDoneAt = t;
                }
            }
        }
    }

    /** The subscriber of one measured wait; records when it completed and wakes the harness. */
    static final class FgSub implements CoreSubscriber<Void> {
        private final Thread notify;
        volatile long doneAt;
        volatile Throwable error;
        private volatile Subscription subscription;

        FgSub(Thread notify) {
            this.notify = notify;
        }

        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Void v) {
        }

        @Override
        public void onError(Throwable t) {
            error = t;
            if (notify != null) {
                LockSupport.unpark(notify);
            }
        }

        @Override
        public void onComplete() {
            doneAt = System.nanoTime();
            if (notify != null) {
                LockSupport.unpark(notify);
            }
        }

        void cancel() {
            subscription.cancel();
        }
    }
}
