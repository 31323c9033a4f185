package io.gpusync.reactor.backends;

import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.reactor.SyncEngine;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs {@code n} virtual threads on the default scheduler, each blocking on one point through
 * {@link SyncEngine#block}, and watches the run: a JFR recording of {@code jdk.VirtualThreadPinned} (threshold 0,
 * so a park of any length while pinned is recorded) and a sampler of the live platform threads.
 *
 * <p><b>The bound on platform threads.</b> Blocked virtual threads must cost no platform thread: every platform thread
 * that appears during the run is one of the engine's own ({@code gpusync-<engine>-…}), a carrier of the default
 * virtual-thread scheduler — never more alive at once than its parallelism, which a pinned carrier would exceed
 * (the scheduler compensates for a carrier blocked in a pinned park) — or one of Reactor's {@code parallel}
 * timer threads (the engine's timeouts; at most one per core), or one of the JDK's own virtual-thread helpers
 * ({@code VirtualThread-unparker}, {@code VirtualThread-unblocker}: one each per JVM). The peak count therefore stays under the
 * baseline plus those three numbers, whatever {@code n}.
 */
final class BlockedVirtualThreads {
    private BlockedVirtualThreads() {
    }

    record Report(int n, long allBlockedMillis, long allReturnedMillis, int baselineThreads, int peakThreads,
                  Set<String> newThreads, int mostCarriersAlive, int engineThreads, List<RecordedEvent> pinned,
                  List<Throwable> failures, int returned) {
        /** The checks every 100k run makes (see the class comment for the thread bound). */
        void assertNoPinningAndNoThreadPerWait(String enginePrefix) {
            assertNoPinningAndNoThreadPerWait(enginePrefix, name -> false);
        }

        /**
         * The same, also allowing the driver's own callback threads, which the JVM attaches (as {@code Thread-<n>})
         * when they first call back into Java — a few per driver, never one per wait.
         */
        void assertNoPinningAndNoThreadPerWait(String enginePrefix, Predicate<String> driverThread) {
            assertNoPinningAndNoThreadPerWait(enginePrefix, driverThread, 8);
        }

        /**
         * The same, with up to {@code maxBackendThreads} threads that {@code backendThread} names: a driver's
         * callback threads, or the threads a backend lends the engine for its blocking waits (never one per wait).
         */
        void assertNoPinningAndNoThreadPerWait(String enginePrefix, Predicate<String> backendThread,
                                               int maxBackendThreads) {
            long driverThreads = newThreads.stream().filter(backendThread).count();
            System.out.printf("%,d virtual threads blocked in %d ms, all returned %d ms after the signal;"
                            + " platform threads: baseline %d, peak %d (engine %d, carriers at most %d alive of %d);"
                            + " new: %s; pinned events: %d%n", n, allBlockedMillis, allReturnedMillis, baselineThreads,
                    peakThreads, engineThreads, mostCarriersAlive, PARALLELISM, newThreads, pinned.size());
            assertThat(failures).isEmpty();
            assertThat(returned).isEqualTo(n);
            assertThat(pinned).as("jdk.VirtualThreadPinned events").isEmpty();
            assertThat(driverThreads).as("driver or backend threads new during the run")
                    .isLessThanOrEqualTo(maxBackendThreads);
            assertThat(newThreads).filteredOn(backendThread.negate()).allSatisfy(name -> assertThat(name.startsWith(enginePrefix)
                    || isProcessThread(name) || name.startsWith(CARRIER) || name.startsWith("parallel-")
                    || name.startsWith("VirtualThread-"))
                    .as("%s is the engine's, gpusync's per-process one, a carrier, a Reactor timer or a JDK"
                            + " virtual-thread helper", name)
                    .isTrue());
            assertThat(mostCarriersAlive).isLessThanOrEqualTo(PARALLELISM);
            assertThat(peakThreads).isLessThanOrEqualTo(baselineThreads + engineThreads + PARALLELISM
                    + Runtime.getRuntime().availableProcessors() + 2 + (int) driverThreads);
        }
    }

    /**
     * gpusync's per-process threads (the cleaner, a housekeeping thread per backend lane: each started on first need,
     * ended when idle), not per engine or wait.
     */
    static boolean isProcessThread(String name) {
        return name.equals("gpusync-cleaner") || name.startsWith("gpusync-housekeeping-");
    }

    /** The default scheduler's parallelism (the JDK's default: one carrier per core). */
    static final int PARALLELISM = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
            Runtime.getRuntime().availableProcessors());
    private static final String CARRIER = "carrier:";

    /**
     * Starts {@code n} virtual threads, the {@code i}-th blocking on {@code pointOf.apply(i)} up to {@code timeout};
     * once the engine holds all {@code n} waits, runs {@code signalAll} (on this platform thread) and waits for every
     * virtual thread to return. With {@code signalAll} {@code null} the device signals the points by itself (a GPU
     * queue behind a long kernel): then nothing waits for all {@code n} to be held.
     */
    static Report run(SyncEngine engine, int n, IntFunction<SyncPoint> pointOf, Runnable signalAll, Duration timeout)
            throws Exception {
        String enginePrefix = "gpusync-" + engine.name() + "-";
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        warmUp(engine);
        try (Recording jfr = new Recording(); Sampler sampler = new Sampler()) {
            jfr.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            jfr.start();
            sampler.start();
            Set<String> baseline = Sampler.names(Thread.getAllStackTraces().keySet());
            int baselineCount = mx.getThreadCount();
            mx.resetPeakThreadCount();

            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            AtomicInteger returned = new AtomicInteger();
            List<Thread> threads = new ArrayList<>(n);
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                SyncPoint point = pointOf.apply(i);
                threads.add(Thread.ofVirtual().start(() -> {
                    try {
                        engine.block(point, timeout);
                        returned.incrementAndGet();
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (signalAll != null && engine.pendingWaits() < n && failures.isEmpty()
                    && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            long t1 = System.nanoTime();
            if (signalAll != null) {
                assertThat(engine.pendingWaits()).as("waits held by the engine").isEqualTo(n);
                signalAll.run();
            }
            for (Thread t : threads) {
                assertThat(t.join(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))).isTrue();
            }
            long t2 = System.nanoTime();
            assertThat(engine.pendingWaits()).isZero();
            int peak = mx.getPeakThreadCount();
            sampler.stop();
            jfr.stop();
            Path file = Files.createTempFile("gpusync-vt-", ".jfr");
            List<RecordedEvent> pinned;
            try {
                jfr.dump(file);
                pinned = RecordingFile.readAllEvents(file).stream()
                        .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned")).toList();
            } finally {
                Files.deleteIfExists(file);
            }
            Set<String> fresh = new TreeSet<>(sampler.seen.keySet());
            fresh.removeAll(baseline);
            int engineThreads = (int) fresh.stream().filter(s -> s.startsWith(enginePrefix)).count()
                    + (int) baseline.stream().filter(s -> s.startsWith(enginePrefix)).count();
            return new Report(n, TimeUnit.NANOSECONDS.toMillis(t1 - t0), TimeUnit.NANOSECONDS.toMillis(t2 - t1),
                    baselineCount, peak, fresh, sampler.mostCarriers, engineThreads, pinned, List.copyOf(failures),
                    returned.get());
        }
    }

    /**
     * 1,000 virtual threads through {@code block} on a host timeline of the same engine, before anything is watched:
     * the first calls load the classes of the path, and a virtual thread that waits for a class another thread is
     * loading or initializing is pinned by the JVM meanwhile (a one-time cost, not gpusync's); it also starts the
     * JDK's own virtual-thread helper threads (the carriers, the monitor unblocker) and the engine's loop.
     */
    private static void warmUp(SyncEngine engine) throws InterruptedException {
        CpuTimeline timeline = new CpuTimeline();
        List<Thread> threads = new ArrayList<>();
        int before = engine.pendingWaits();
        for (int i = 0; i < 1000; i++) {
            threads.add(Thread.ofVirtual().start(() -> engine.block(timeline.at(1), Duration.ofMinutes(1))));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (engine.pendingWaits() < before + 1000 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        timeline.signal(1);
        for (Thread t : threads) {
            t.join();
        }
    }

    /** Samples the live platform threads every 2 ms (virtual threads are not listed by the JDK). */
    private static final class Sampler implements AutoCloseable {
        final ConcurrentHashMap<String, Boolean> seen = new ConcurrentHashMap<>();
        volatile int mostCarriers;
        private volatile boolean stopped;
        private final Thread thread = Thread.ofPlatform().daemon().name("vt-test-sampler").unstarted(this::sample);

        void start() {
            thread.start();
        }

        void stop() {
            stopped = true;
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void close() {
            stop();
        }

        private void sample() {
            while (!stopped) {
                Set<Thread> live = Thread.getAllStackTraces().keySet();
                int carriers = 0;
                for (Thread t : live) {
                    if (isCarrier(t)) {
                        carriers++;
                    }
                }
                mostCarriers = Math.max(mostCarriers, carriers);
                for (String name : names(live)) {
                    seen.put(name, Boolean.TRUE);
                }
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        /** Thread names, carriers marked as such (they are named like any ForkJoinPool's workers). */
        static Set<String> names(Set<Thread> threads) {
            Set<String> names = new HashSet<>();
            for (Thread t : threads) {
                names.add(isCarrier(t) ? CARRIER + t.getName() : t.getName());
            }
            return names;
        }

        private static boolean isCarrier(Thread t) {
            return t.getClass().getName().equals("jdk.internal.misc.CarrierThread");
        }
    }
}
