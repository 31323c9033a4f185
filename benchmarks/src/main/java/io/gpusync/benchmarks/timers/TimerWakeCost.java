package io.gpusync.benchmarks.timers;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * What a housekeeping thread that wakes on a timer costs by its wake-ups alone, measured two ways.
 *
 * <ul>
 *   <li><b>one</b> (default): one platform thread that only {@code LockSupport.parkNanos(interval)} in a loop, its
 *       CPU time read per round from the thread's CPU clock ({@code ThreadMXBean}, i.e.
 *       {@code CLOCK_THREAD_CPUTIME_ID}) — what a test that reads a thread's CPU time sees.</li>
 *   <li><b>capacity</b>: many such threads at once, so the machine does hundreds of thousands of wake-ups a second;
 *       the machine's busy time over the run ({@code /proc/stat}, all CPUs) divided by the wake-ups done is what one
 *       wake-up really takes from the machine, next to what the threads' CPU clocks charged for the same wake-ups.
 *       On virtual machines the thread clock can charge an isolated wake-up several times what the machine
 *       spends on it; the machine's figure is the one a server pays.</li>
 * </ul>
 *
 * <pre>
 * java -cp benchmarks/target/classes io.gpusync.benchmarks.timers.TimerWakeCost [interval-µs=10000] [rounds=5] [round-ms=2000]
 * java -cp benchmarks/target/classes io.gpusync.benchmarks.timers.TimerWakeCost capacity [threads=200] [interval-µs=1000] [seconds=3]
 * </pre>
 */
public final class TimerWakeCost {
    private TimerWakeCost() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("capacity")) {
            capacity(args.length > 1 ? Integer.parseInt(args[1]) : 200,
                    (args.length > 2 ? Long.parseLong(args[2]) : 1_000) * 1_000,
                    args.length > 3 ? Integer.parseInt(args[3]) : 3);
            return;
        }
        long intervalNanos = (args.length > 0 ? Long.parseLong(args[0]) : 10_000) * 1_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        long roundMillis = args.length > 2 ? Long.parseLong(args[2]) : 2_000;
        Thread timer = Thread.ofPlatform().daemon().name("timer-" + intervalNanos / 1_000 + "us").start(() -> {
            while (true) {
                LockSupport.parkNanos(intervalNanos);
            }
        });
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        System.out.printf("one thread parking %,d µs in a loop, %d cores, %s%n", intervalNanos / 1_000,
                Runtime.getRuntime().availableProcessors(), Runtime.version());
        for (int r = 0; r < rounds; r++) {
            long cpu0 = mx.getThreadCpuTime(timer.threadId());
            long wall0 = System.nanoTime();
            Thread.sleep(roundMillis);
            long cpu = mx.getThreadCpuTime(timer.threadId()) - cpu0;
            long wall = System.nanoTime() - wall0;
            double wakes = (double) wall / intervalNanos;
            System.out.printf("round %d: %.3f %% of a core, %.1f µs of CPU per wake-up%n", r, 100.0 * cpu / wall,
                    cpu / 1_000.0 / wakes);
        }
    }

    private static void capacity(int threads, long intervalNanos, int seconds) throws Exception {
        LongAdder wakes = new LongAdder();
        List<Thread> timers = new ArrayList<>();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        var stop = new java.util.concurrent.atomic.AtomicBoolean();
        for (int i = 0; i < threads; i++) {
            timers.add(Thread.ofPlatform().daemon().name("timer-" + i).start(() -> {
                while (!stop.get()) {
                    LockSupport.parkNanos(intervalNanos);
                    wakes.increment();
                }
            }));
        }
        Thread.sleep(500); // all started and in step
        long[] busy0 = busyAndTotalJiffies();
        long wakes0 = wakes.sum();
        long clock0 = timers.stream().mapToLong(t -> mx.getThreadCpuTime(t.threadId())).sum();
        long wall0 = System.nanoTime();
        Thread.sleep(seconds * 1_000L);
        long[] busy1 = busyAndTotalJiffies();
        long done = wakes.sum() - wakes0;
        long clock = timers.stream().mapToLong(t -> mx.getThreadCpuTime(t.threadId())).sum() - clock0;
        long wall = System.nanoTime() - wall0;
        stop.set(true);
        int cpus = Runtime.getRuntime().availableProcessors();
        double busyShare = (double) (busy1[0] - busy0[0]) / (busy1[1] - busy0[1]);
        double machineNanos = busyShare * cpus * wall; // busy CPU time of the whole machine, this JVM's and others'
        System.out.printf("%d threads parking %,d µs in a loop, %d cores, %s: %,.0f wake-ups/s; machine busy %.1f %%"
                        + " -> %.1f µs per wake-up (upper bound: everything else that ran is counted too);"
                        + " the threads' CPU clocks charged %.1f µs per wake-up%n",
                threads, intervalNanos / 1_000, cpus, Runtime.version(), done * 1e9 / wall, 100 * busyShare,
                machineNanos / done / 1_000, (double) clock / done / 1_000);
    }

    /** Busy and total jiffies of all CPUs together ({@code /proc/stat}, first line). */
    private static long[] busyAndTotalJiffies() throws IOException {
        String[] f = Files.readAllLines(Path.of("/proc/stat")).getFirst().trim().split("\\s+");
        long total = 0;
        long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]); // idle + iowait
        for (int i = 1; i < Math.min(f.length, 9); i++) { // user … steal; guest time is already inside user
            total += Long.parseLong(f[i]);
        }
        return new long[] {total - idle, total};
    }
}
