package io.gpusync.benchmarks.cuda;

import io.gpusync.benchmarks.subjects.CudaGatedSubject;
import io.gpusync.benchmarks.subjects.Subject;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPolicy;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where a burst of CUDA completions spends its time in gpusync: the harness's burst cell (N gated points, made
 * ahead on {@link CudaGatedSubject}'s lanes, subscribed through an engine, then the gate opened for all of them at
 * once) repeated, each burst timed from the gate's opening to its first, median and last completion, and the CPU of
 * every thread group per completion over all bursts. Run it with JFR sampling every millisecond to see the hot frames
 * of the sweeper, the loops and the driver's callback thread:
 *
 * <pre>
 * bash .device/setup &amp;&amp; CUDA_DEVICE_MAX_CONNECTIONS=32 JAVA_OPTS="-XX:StartFlightRecording:method-profiling=max,filename=burst.jfr" \
 *   .device/java io.gpusync.benchmarks.cuda.CudaBurstProfile [n=1000] [bursts=40] [event|timeline] [LOW_LATENCY|LOW_CPU]
 * </pre>
 *
 * Prints a line per burst and a summary; skips (exit 0) where there is no CUDA driver or device.
 */
public final class CudaBurstProfile {
    private static final int WARM_UP = 3;

    private CudaBurstProfile() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000;
        int bursts = args.length > 1 ? Integer.parseInt(args[1]) : 40;
        boolean events = args.length <= 2 || args[2].equals("event");
        WaitPolicy policy = args.length > 3 ? WaitPolicy.valueOf(args[3]) : WaitPolicy.LOW_LATENCY;
        Subject subject = events ? CudaGatedSubject.event() : CudaGatedSubject.timeline();
        String why = subject.unavailableReason();
        if (why != null) {
            System.out.println("CudaBurstProfile skipped: " + why);
            return;
        }
        SyncEngine engine = GpuSync.builder().name("burst").waitPolicy(policy).build();
        long[] lastNanos = new long[bursts];
        long[] firstNanos = new long[bursts];
        ThreadCpu cpu0 = null;
        long completions = 0;
        System.out.printf("%s, N = %,d, %s, %d bursts after %d warm-up%n", subject.name(), n, policy, bursts, WARM_UP);
        try {
            for (int b = -WARM_UP; b < bursts; b++) {
                try (Subject.Stream stream = subject.newStream()) {
                    Subject.Point[] points = new Subject.Point[n];
                    for (int i = 0; i < n; i++) {
                        points[i] = stream.next();
                    }
                    long[] doneAt = new long[n];
                    AtomicInteger errors = new AtomicInteger();
                    CountDownLatch all = new CountDownLatch(n);
                    for (int i = 0; i < n; i++) {
                        int index = i;
                        engine.await(points[i].waiter(), Duration.ofSeconds(30)).subscribe(v -> { }, e -> {
                            errors.incrementAndGet();
                            all.countDown();
                        }, () -> {
                            doneAt[index] = System.nanoTime();
                            all.countDown();
                        });
                    }
                    Thread.sleep(200); // past every spin budget: the waits sit behind their covers, as in the harness
                    if (b == 0) {
                        cpu0 = ThreadCpu.now();
                    }
                    long start = System.nanoTime();
                    for (Subject.Point p : points) {
                        p.signal();
                    }
                    if (!all.await(30, TimeUnit.SECONDS) || errors.get() > 0) {
                        throw new IllegalStateException("burst " + b + ": " + all.getCount() + " waits not ended, "
                                + errors.get() + " failed");
                    }
                    long[] d = doneAt.clone();
                    Arrays.sort(d);
                    if (b >= 0) {
                        firstNanos[b] = d[0] - start;
                        lastNanos[b] = d[n - 1] - start;
                        completions += n;
                        System.out.printf("burst %2d: first %,8.1f µs  median %,8.1f µs  last %,8.1f µs  %,10.0f completions/s%n",
                                b, (d[0] - start) / 1e3, (d[n / 2] - start) / 1e3, (d[n - 1] - start) / 1e3,
                                n * 1e9 / (d[n - 1] - start));
                    }
                    stream.signalAll();
                    for (Subject.Point p : points) {
                        p.waiter().close();
                    }
                }
            }
        } finally {
            engine.dispose();
        }
        String byGroup = ThreadCpu.now().since(cpu0, completions); // the settles' idle CPU included
        Arrays.sort(lastNanos);
        Arrays.sort(firstNanos);
        System.out.printf("%nsummary: completions/s p50 %,.0f (best %,.0f), first completion p50 %,.1f µs, last p50 %,.1f µs%n",
                n * 1e9 / lastNanos[bursts / 2], n * 1e9 / lastNanos[0], firstNanos[bursts / 2] / 1e3,
                lastNanos[bursts / 2] / 1e3);
        System.out.println("CPU µs per completion by thread group: " + byGroup);
        System.exit(0); // the driver's threads are not daemons
    }
}
