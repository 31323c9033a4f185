// What a LOW_CPU wait costs the waiting side beyond a thread blocked in the same wait, with no GPU: a "device"
// thread (not counted) plays a kernel of PERIOD_US and the driver thread that signals its end (CpuTimeline.signal,
// which runs onSignal callbacks in place, as a CUDA stream callback does). The measuring thread launches, then waits:
//   raw       parked in the waiter's own blocking await (the BlockingSync baseline);
//   low-cpu   through an engine with WaitPolicy.LOW_CPU (callback at once, completion handed to a loop);
//   default   through an engine with the default policy (spin budget, learned windows).
// Prints per strategy: p50/p99 of launch -> the measuring thread runs again, and the CPU of the measuring thread and
// every gpusync-* thread per wait and in cores (as CudaLatency counts them).
//   java --enable-native-access=ALL-UNNAMED -cp "$CP" benchmarks/probes/LowCpuWakeCost.java 1000 3000
// with $CP the benchmarks module's class path (mvn -o -q compile dependency:build-classpath
// -Dmdep.outputFile=/tmp/cp.txt -pl benchmarks -am); Netty's epoll jars on it make the engines' loops Netty's.
import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPolicy;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.function.LongSupplier;

public class LowCpuWakeCost {
    static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    public static void main(String[] args) throws Exception {
        long periodNanos = Long.parseLong(args.length > 0 ? args[0] : "1000") * 1000;
        int iterations = Integer.parseInt(args.length > 1 ? args[1] : "3000");
        String only = args.length > 2 ? args[2] : "raw,low-cpu,default";
        SynchronousQueue<Runnable> launches = new SynchronousQueue<>();
        Thread device = Thread.ofPlatform().daemon().name("device").start(() -> {
            try {
                while (true) {
                    Runnable end = launches.take();
                    long due = System.nanoTime() + periodNanos;
                    while (System.nanoTime() < due) {
                        java.util.concurrent.locks.LockSupport.parkNanos(due - System.nanoTime());
                    }
                    end.run();
                }
            } catch (InterruptedException e) {
                // done
            }
        });
        SyncEngine lowCpu = GpuSync.builder().name("low-cpu").waitPolicy(WaitPolicy.LOW_CPU).build();
        SyncEngine lowLatency = GpuSync.builder().name("default").build();
        CpuTimeline timeline = new CpuTimeline();
        long[] value = {0};
        System.out.printf("period %d us, %d iterations%n", periodNanos / 1000, iterations);
        System.out.println("| strategy | p50 us past period | p99 us past period | CPU us per wait | cores |");
        System.out.println("|---|---:|---:|---:|---:|");
        for (String s : only.split(",")) {
            LongSupplier wait = switch (s) {
                case "raw" -> () -> {
                    SyncPoint p = timeline.at(++value[0]);
                    long t0 = System.nanoTime();
                    launch(launches, timeline, value[0]);
                    p.waiter().await(Duration.ofSeconds(10));
                    return System.nanoTime() - t0;
                };
                case "low-cpu" -> () -> viaEngine(lowCpu, launches, timeline, ++value[0]);
                case "default" -> () -> viaEngine(lowLatency, launches, timeline, ++value[0]);
                default -> throw new IllegalArgumentException(s);
            };
            for (int i = 0; i < Math.min(500, iterations / 5); i++) {
                wait.getAsLong();
            }
            long[] samples = new long[iterations];
            long cpu0 = cpuNanos();
            long wall0 = System.nanoTime();
            for (int i = 0; i < iterations; i++) {
                samples[i] = wait.getAsLong();
            }
            long wall = System.nanoTime() - wall0;
            long cpu = cpuNanos() - cpu0;
            Arrays.sort(samples);
            System.out.printf("| %s | %.1f | %.1f | %.1f | %.3f |%n", s,
                    (samples[iterations / 2] - periodNanos) / 1e3, (samples[iterations * 99 / 100] - periodNanos) / 1e3,
                    cpu / 1e3 / iterations, cpu / (double) wall);
        }
        lowCpu.dispose();
        lowLatency.dispose();
        device.interrupt();
    }

    static void launch(SynchronousQueue<Runnable> launches, CpuTimeline timeline, long v) {
        try {
            launches.put(() -> timeline.signal(v));
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    static long viaEngine(SyncEngine engine, SynchronousQueue<Runnable> launches, CpuTimeline timeline, long v) {
        CountDownLatch latch = new CountDownLatch(1);
        long[] done = {0};
        long t0 = System.nanoTime();
        launch(launches, timeline, v);
        engine.await(timeline.at(v), Duration.ofSeconds(10)).subscribe(x -> { }, e -> latch.countDown(), () -> {
            done[0] = System.nanoTime();
            latch.countDown();
        });
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        return done[0] - t0;
    }

    /** CPU of the measuring thread and of every gpusync-* thread, as CudaLatency counts it. */
    static long cpuNanos() {
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t == Thread.currentThread() || t.getName().startsWith("gpusync-")) {
                sum += Math.max(0, THREADS.getThreadCpuTime(t.threadId()));
            }
        }
        return sum;
    }
}
