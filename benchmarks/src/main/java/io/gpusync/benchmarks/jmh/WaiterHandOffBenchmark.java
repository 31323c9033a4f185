package io.gpusync.benchmarks.jmh;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Handing waits to the {@code BLOCKING} path's threads from several subscribing threads at once: the engine's
 * lock-free hand-off ({@code WaiterThreads}, which {@code WaiterPool} uses; {@link LockFreeHandOff}) against the
 * {@code ThreadPoolExecutor} one it replaced ({@link ExecutorHandOff}), with 16 threads at most (the engine's
 * default {@code waiterThreads}) and the engine's 30 s keep-alive, or a 100 µs one that makes threads come and go.
 *
 * <p>Four subscribing threads ({@code @Threads(4)}) each hand off {@value #WAITS} waits per operation and park
 * until those have been served; so up to 16 waits are in service, the pool's bound. A wait here is served at once
 * (like a wait on a point already signalled, whose first probe runs on the pool thread), so the score is the
 * hand-off itself: waits handed off and served per second. Besides JMH's score, each trial prints the time a
 * subscribing thread spent in one hand-off call (HdrHistogram over the measurement iterations: what an event loop
 * pays), how often a subscribing thread parked inside a hand-off call (a contended lock; counted by
 * {@link #handOffCountingParks}, whose own score is not the hand-off's), the
 * hand-offs refused for want of a permit (the engine sends those to the probe path; here they are served in place)
 * and the threads each pool made.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Benchmark)
@Threads(4)
public class WaiterHandOffBenchmark {
    static final int WAITS = 4;
    static final int MAX_THREADS = 16;

    /** {@code executor}: the {@code ThreadPoolExecutor} hand-off (the baseline); {@code lock-free}: the engine's. */
    @Param({"executor", "lock-free"})
    public String handOff;

    /**
     * How long an idle thread waits for the next wait: {@code 30s} (the engine's; threads are reused) or
     * {@code 100us} (they retire between operations and are made again: the executor takes its main lock to add
     * and to remove each one).
     */
    @Param({"30s", "100us"})
    public String keepAlive;

    /** A way to hand a task to a thread of its own, or refuse it at once. */
    interface HandOff {
        boolean tryStart(Runnable task);

        void shutdown();
    }

    private HandOff pool;
    private final AtomicInteger threadsMade = new AtomicInteger();
    private final Recorder callNanos = new Recorder(3);
    private final Histogram measuredCallNanos = new Histogram(3);
    private final LongAdder refused = new LongAdder();
    /** Parks of the subscribing threads inside hand-off calls ({@link #handOffCountingParks}), when measuring. */
    final LongAdder parksInHandOffs = new LongAdder();
    private long measuredRefused;
    private boolean measuring;
    private String method;

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
        method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
        ThreadFactory factory = r -> Thread.ofPlatform().daemon(true)
                .name("hand-off-" + handOff + "-" + threadsMade.incrementAndGet()).unstarted(r);
        long keepAliveNanos = switch (keepAlive) {
            case "30s" -> TimeUnit.SECONDS.toNanos(30);
            case "100us" -> TimeUnit.MICROSECONDS.toNanos(100);
            default -> throw new IllegalArgumentException("keepAlive: 30s or 100us, not " + keepAlive);
        };
        pool = switch (handOff) {
            case "executor" -> new ExecutorHandOff(MAX_THREADS, keepAliveNanos, factory);
            case "lock-free" -> new LockFreeHandOff(MAX_THREADS, keepAliveNanos, factory);
            default -> throw new IllegalArgumentException("handOff: executor or lock-free, not " + handOff);
        };
    }

    @Setup(Level.Iteration)
    public void startIteration(IterationParams iteration) {
        callNanos.getIntervalHistogram(); // drops what came before
        refused.reset();
        measuring = iteration.getType() == IterationType.MEASUREMENT;
    }

    @TearDown(Level.Iteration)
    public void endIteration() {
        Histogram interval = callNanos.getIntervalHistogram();
        if (measuring) {
            measuredCallNanos.add(interval);
            measuredRefused += refused.sum();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.shutdown();
        Histogram h = measuredCallNanos;
        String figures = method.equals("handOffCountingParks")
                ? String.format("parked inside a hand-off call %,d times", parksInHandOffs.sum())
                : String.format("one hand-off call, ns: p50 %d, p90 %d, p99 %d, p99.9 %d, max %d (%,d calls)",
                        h.getValueAtPercentile(50), h.getValueAtPercentile(90), h.getValueAtPercentile(99),
                        h.getValueAtPercentile(99.9), h.getMaxValue(), h.getTotalCount());
        System.out.printf("%n[%s, hand-off %s, keep-alive %s] %s; refused %,d; threads made %,d%n",
                method, handOff, keepAlive, figures, measuredRefused, threadsMade.get());
    }

    /** One subscribing thread: its waits count themselves served and wake it when its last one is. */
    @State(Scope.Thread)
    public static class Subscriber {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        final AtomicInteger served = new AtomicInteger();
        volatile int goal;
        Thread thread;
        Runnable wait;
        private boolean measuring;

        @Setup(Level.Trial)
        public void setUp() {
            thread = Thread.currentThread();
            wait = () -> {
                if (served.incrementAndGet() == goal) {
                    LockSupport.unpark(thread);
                }
            };
        }

        @Setup(Level.Iteration)
        public void startIteration(IterationParams iteration) {
            measuring = iteration.getType() == IterationType.MEASUREMENT;
        }

        /** How many times this thread has waited (the JVM counts every {@code LockSupport.park}). */
        long waited() {
            return THREADS.getThreadInfo(thread.threadId()).getWaitedCount();
        }
    }

    /** Hands off {@value #WAITS} waits, then parks until they have been served. */
    @Benchmark
    @OperationsPerInvocation(WAITS)
    public void handOffAndServe(Subscriber s) {
        int goal = s.served.get() + WAITS;
        s.goal = goal;
        handOff(s);
        awaitServed(s, goal);
    }

    /**
     * {@link #handOffAndServe} that also counts the times the subscribing thread parked inside its hand-off calls
     * (on a contended lock): the JVM's count of the thread's waits before and after them. The two reads cost
     * microseconds, so its score is not the hand-off's, and its calls are not timed; only its count of parks is
     * reported.
     */
    @Benchmark
    @OperationsPerInvocation(WAITS)
    public void handOffCountingParks(Subscriber s) {
        int goal = s.served.get() + WAITS;
        s.goal = goal;
        long before = s.waited();
        for (int i = 0; i < WAITS; i++) { // no timing here: the histogram may take a lock when it grows
            if (!pool.tryStart(s.wait)) {
                refused.increment();
                s.wait.run();
            }
        }
        long parked = s.waited() - before;
        if (s.measuring && parked > 0) {
            parksInHandOffs.add(parked);
        }
        awaitServed(s, goal);
    }

    private void handOff(Subscriber s) {
        for (int i = 0; i < WAITS; i++) {
            long t0 = System.nanoTime();
            boolean started = pool.tryStart(s.wait);
            callNanos.recordValue(System.nanoTime() - t0);
            if (!started) {
                refused.increment();
                s.wait.run();
            }
        }
    }

    private static void awaitServed(Subscriber s, int goal) {
        while (s.served.get() < goal) {
            LockSupport.park(s);
        }
    }
}
