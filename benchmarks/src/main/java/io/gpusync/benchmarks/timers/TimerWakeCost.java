package io.gpusync.benchmarks.timers;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.locks.LockSupport;

/**
 * What a housekeeping thread that wakes on a timer costs by its wake-ups alone: one platform thread that only
 * {@code LockSupport.parkNanos(interval)} in a loop, its CPU time read per round. gpusync's CUDA fault watch and
 * armer are such threads; on a KVM guest a wake-up costs tens of µs of CPU whatever the thread then does, which
 * bounds how often such a thread may wake for a given share of a core.
 *
 * <pre>
 * java -cp benchmarks/target/classes io.gpusync.benchmarks.timers.TimerWakeCost [interval-µs=10000] [rounds=5] [round-ms=2000]
 * </pre>
 */
public final class TimerWakeCost {
    private TimerWakeCost() {
    }

    public static void main(String[] args) throws InterruptedException {
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
}
