package io.gpusync.reactor.backends;

import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.test.cuda.CudaWorkQueue;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * CUDA under faults, on a real GPU, each scenario in a child JVM (a sticky error poisons the primary context of
 * the process): waits past their spin budget — engine ({@link GpuSync#await}) and blocking ({@code await}) alike,
 * events and host-timeline values, {@code FOREVER} and timed — must end with {@link DeviceLostException} soon
 * after a kernel traps, and with {@link SyncCancelledException} at once when their {@link CudaWorkQueue} closes.
 * Each child prints one line per wait kind with the fault-to-error latency (the fault is timestamped by a thread
 * that spins on {@code cuStreamQuery} of the trapping stream). The waits sit behind stream callbacks, which the
 * driver calls with the error, so they fail as soon as the driver reports the fault; the fault watch's timer only
 * backs that up.
 */
@Tag("gpu")
class CudaFaultsGpuTest {
    /** The wait kinds every child starts: engine and blocking, events and timeline values, forever and timed. */
    private static final List<String> KINDS = List.of("engine-event-forever", "engine-value-forever",
            "engine-event-10s", "blocking-event-forever", "blocking-value-forever", "blocking-value-10s");

    /** {@code CudaFaultWatch.BACKSTOP_INTERVAL_NANOS} (package-private in gpusync-cuda). */
    private static final long WATCH_BACKSTOP_INTERVAL_NANOS = 1_000_000_000L;

    /**
     * Issue 10's bound: 50 ms p99. The callbacks report the fault themselves, as soon as the driver calls them with
     * the error — on the H200 with these 165 waits, 32 callbacks in flight and many streams, 7–16 ms after the trap
     * (the driver's own queries took up to 4.7 ms then; a bare probe of five callbacks saw them ≈ 0.1 ms after it),
     * so the latency is the driver's, no longer a timer's: p99 16.5 ms, and the same with the watch at 1 s.
     */
    @Test
    void aKernelThatTrapsAfterTheSpinBudgetFailsEveryPendingWaitWithDeviceLostWithin50Ms() throws Exception {
        assumeCudaDevice();
        List<Long> all = new ArrayList<>();
        for (int run = 0; run < 3; run++) { // three independent faults, three child JVMs
            String out = child("fault");
            for (String kind : KINDS) {
                assertThat(out).as("child output:%n%s", out).contains(kind + " FATAL");
            }
            out.lines().filter(l -> l.startsWith("LATENCY_US ")).forEach(l ->
                    Arrays.stream(l.substring(11).split(",")).map(Long::parseLong).forEach(all::add));
        }
        all.sort(null);
        long p50 = all.get(all.size() / 2);
        long p99 = all.get((int) Math.ceil(all.size() * 0.99) - 1);
        System.out.printf("FAULT_TO_ERROR n=%d p50=%d us p99=%d us max=%d us%n", all.size(), p50, p99,
                all.get(all.size() - 1));
        assertThat(p99).as("fault → DeviceLostException p99, µs").isLessThanOrEqualTo(50_000);
    }

    @Test
    void closingTheQueueFailsEveryPendingWaitWithCancelledAtOnce() throws Exception {
        assumeCudaDevice();
        String out = child("close");
        for (String kind : KINDS) {
            assertThat(out).as("child output:%n%s", out).contains(kind + " CANCELLED");
        }
        assertThat(out).contains("AFTER_CLOSE ok");
    }

    /**
     * While waits sit behind stream callbacks and nothing faults, the fault watch only backs the callbacks up: it
     * wakes about once a second ({@code CudaFaultWatch.BACKSTOP_INTERVAL_NANOS}) and does one context check per
     * wake-up, whatever the number of waits (most of the 1,000 here are deferred for want of room, but their context has
     * callbacks in flight, which report a fault for all of them). Its CPU beyond that of a bare thread parking on
     * the same interval (measured alongside, with the same clock) is at most 150 µs per wake-up. (Before, the watch
     * checked every 25 ms: 80 wake-ups in 2 s, 0.31–0.46 % of a core on the H200's idle PVM guest; issue 10 asked
     * for 0.1 %.)
     */
    @Test
    void theFaultWatchOnlyBacksUpTheCallbacksWhileNothingFaults() throws Exception {
        assumeCudaDevice();
        // an engine of its own that hands every wait to its stream callback at once: the default engine's pollers may
        // have learned, from earlier tests in this JVM, a window that holds these waits without stream callbacks
        // (measured on the H200: then nothing was registered and the watch, rightly, never woke)
        SyncEngine engine = GpuSync.builder().name("fault-watch-cost").spinBudget(Duration.ZERO).build();
        try (CudaWorkQueue q = CudaWorkQueue.open(0)) {
            q.launchSpin(4_000_000_000L); // 1,000 waits pending behind stream callbacks for the whole window
            List<SyncPoint> points = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(1_000);
            AtomicInteger failed = new AtomicInteger();
            for (int i = 0; i < 1_000; i++) {
                SyncPoint p = i % 2 == 0 ? q.recordEvent() : q.advanceTimeline();
                points.add(p);
                engine.await(p, SyncPoint.FOREVER).subscribe(v -> { }, e -> {
                    failed.incrementAndGet();
                    done.countDown();
                }, done::countDown);
            }
            AtomicBoolean stop = new AtomicBoolean();
            Thread floor = Thread.ofPlatform().daemon().name("timer-floor").start(() -> {
                while (!stop.get()) {
                    LockSupport.parkNanos(WATCH_BACKSTOP_INTERVAL_NANOS);
                }
            });
            Thread.sleep(300); // the watch's interval has grown to its longest
            Thread watch = thread("gpusync-cuda-fault-watch");
            Thread armer = thread("gpusync-cuda-armer"); // probes the waits deferred for want of host-function room
            Path watchTask = nativeTask("gpusync-cuda-fa");
            // java.management through reflection: the test sources compile as part of module io.gpusync.reactor
            Object mx = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
            java.lang.reflect.Method cpu = Class.forName("java.lang.management.ThreadMXBean")
                    .getMethod("getThreadCpuTime", long.class);
            long cpu0 = (long) cpu.invoke(mx, watch.threadId());
            long floor0 = (long) cpu.invoke(mx, floor.threadId());
            long armer0 = (long) cpu.invoke(mx, armer.threadId());
            long wakes0 = voluntarySwitches(watchTask);
            assertThat(cpu0).as("this JVM measures the watch thread's CPU time (-1 = not measured)").isPositive();
            long t0 = System.nanoTime();
            Thread.sleep(3_000);
            long cpu1 = (long) cpu.invoke(mx, watch.threadId());
            long floor1 = (long) cpu.invoke(mx, floor.threadId());
            long armer1 = (long) cpu.invoke(mx, armer.threadId());
            long wakes = voluntarySwitches(watchTask) - wakes0;
            long elapsed = System.nanoTime() - t0;
            stop.set(true);
            double pct = 100.0 * (cpu1 - cpu0) / elapsed;
            double floorPct = 100.0 * (floor1 - floor0) / elapsed;
            double armerPct = 100.0 * (armer1 - armer0) / elapsed;
            System.out.printf("FAULT_WATCH_CPU %.4f %% of a core, %d wake-ups in %.2f s (1,000 waits pending, one"
                            + " context, %s); a bare thread on the same timer %.4f %%; watch beyond its timer %.4f %%;"
                            + " armer %.3f %% of a core%n", pct, wakes, elapsed / 1e9, watch.getState(), floorPct,
                    pct - floorPct, armerPct);
            assertThat(wakes).as("the watch wakes about once a second (+ slack) while waits are pending")
                    .isLessThanOrEqualTo(elapsed / WATCH_BACKSTOP_INTERVAL_NANOS + 3);
            assertThat(wakes).as("it woke").isPositive();
            // a coarse guard against work per pending wait (1,000 waits at a microsecond each would pass it); that
            // each wake-up checks each context once, whatever its waits, CudaFaultWatchTest shows without a GPU. The
            // figure itself is an average of a few wake-ups, so one-time costs inside the window dominate it.
            assertThat((cpu1 - cpu0 - (floor1 - floor0)) / wakes).as("CPU per wake-up beyond a bare timer's, ns")
                    .isLessThanOrEqualTo(1_000_000);
            assertThat(armerPct).as("the armer's probe budget (~2 %% of a core) bounds the cost of deferral")
                    .isLessThanOrEqualTo(5.0);
            assertThat(done.await(30, TimeUnit.SECONDS)).as("all complete when the kernel ends").isTrue();
            assertThat(failed.get()).as("none failed: the 1,000 waits were really pending, watched, then completed")
                    .isZero();
            points.forEach(p -> p.waiter().close());
        } finally {
            engine.dispose();
        }
    }

    /** The {@code /proc/self/task/<tid>} of the one thread whose native name (15 characters at most) is {@code comm}. */
    private static Path nativeTask(String comm) throws IOException {
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            List<Path> found = tasks.filter(t -> {
                try {
                    return Files.readString(t.resolve("comm")).trim().equals(comm);
                } catch (IOException gone) {
                    return false;
                }
            }).toList();
            assertThat(found).as("native threads named %s", comm).hasSize(1);
            return found.getFirst();
        }
    }

    /** How often a thread has blocked of its own accord: each park that was not cut short by the timer's slack. */
    private static long voluntarySwitches(Path task) throws IOException {
        return Files.readAllLines(task.resolve("status")).stream()
                .filter(l -> l.startsWith("voluntary_ctxt_switches:"))
                .mapToLong(l -> Long.parseLong(l.substring(l.indexOf(':') + 1).trim())).findFirst().orElseThrow();
    }

    private static Thread thread(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no thread " + name));
    }

    private static void assumeCudaDevice() {
        try {
            CudaWorkQueue.open(0).close();
        } catch (SyncException e) {
            assumeTrue(false, "no CUDA driver or device here: " + e.getMessage());
        }
    }

    private static String child(String mode) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Child.class.getName());
        cmd.add(mode);
        Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        boolean exited = child.waitFor(120, TimeUnit.SECONDS);
        if (!exited) { // a thread dump into its output, then end it: its output ends with it, and is read below
            new ProcessBuilder("kill", "-3", Long.toString(child.pid())).start().waitFor(5, TimeUnit.SECONDS);
            Thread.sleep(2_000);
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        System.out.println(out);
        assertThat(exited).as("child finished; output:%n%s", out).isTrue();
        assertThat(child.exitValue()).as("child output:%n%s", out).isZero();
        return out;
    }

    /** Runs in the child JVM. */
    public static final class Child {
        private static final long MS = 1_000_000L;

        public static void main(String[] args) throws Exception {
            int rc;
            try {
                rc = args[0].equals("fault") ? fault() : close();
            } catch (Throwable t) {
                System.out.println("CHILD FAILED at " + System.nanoTime() / 1_000 + " us");
                t.printStackTrace(System.out);
                rc = 2;
            }
            System.out.flush();
            Runtime.getRuntime().halt(rc); // skip Cleaners and hooks on a poisoned context
        }

        /** Outcome of one wait: the error and when it arrived. */
        private record Outcome(Throwable error, long atNanos) {
        }

        /** Starts every kind of wait on points behind {@code before}'s work; returns the outcomes by kind. */
        private static Map<String, List<Outcome>> startWaits(CudaWorkQueue q, int perKind, CountDownLatch done) {
            Map<String, List<Outcome>> outcomes = new ConcurrentHashMap<>();
            KINDS.forEach(k -> outcomes.put(k, java.util.Collections.synchronizedList(new ArrayList<>())));
            long t0 = System.nanoTime();
            for (int i = 0; i < perKind; i++) {
                if (i % 10 == 0) {
                    System.out.println("STARTING " + i + " at +" + (System.nanoTime() - t0) / 1_000 + " us");
                }
                SyncPoint event = q.recordEvent();
                SyncPoint value = q.advanceTimeline();
                SyncPoint event2 = q.recordEvent();
                engine(GpuSync.await(event, SyncPoint.FOREVER), outcomes.get("engine-event-forever")::add, done);
                engine(GpuSync.await(value, SyncPoint.FOREVER), outcomes.get("engine-value-forever")::add, done);
                engine(GpuSync.await(event2, Duration.ofSeconds(10)), outcomes.get("engine-event-10s")::add, done);
            }
            System.out.println("ENGINE_WAITS_STARTED at +" + (System.nanoTime() - t0) / 1_000 + " us");
            for (int i = 0; i < Math.max(2, perKind / 10); i++) {
                blocking(q.recordEvent(), SyncPoint.FOREVER, outcomes.get("blocking-event-forever")::add, done);
                blocking(q.advanceTimeline(), SyncPoint.FOREVER, outcomes.get("blocking-value-forever")::add, done);
                blocking(q.advanceTimeline(), Duration.ofSeconds(10), outcomes.get("blocking-value-10s")::add, done);
            }
            return outcomes;
        }

        private static void engine(reactor.core.publisher.Mono<Void> wait, Consumer<Outcome> sink, CountDownLatch done) {
            wait.subscribe(v -> { }, e -> {
                sink.accept(new Outcome(e, System.nanoTime()));
                done.countDown();
            }, () -> {
                sink.accept(new Outcome(null, System.nanoTime()));
                done.countDown();
            });
        }

        private static void blocking(SyncPoint point, Duration timeout, Consumer<Outcome> sink, CountDownLatch done) {
            Thread.ofPlatform().daemon().start(() -> {
                Throwable error = null;
                try {
                    point.await(timeout);
                } catch (Throwable t) {
                    error = t;
                }
                sink.accept(new Outcome(error, System.nanoTime()));
                done.countDown();
            });
        }

        private static int count(CudaWorkQueue q, int perKind) {
            return perKind * 3 + Math.max(2, perKind / 10) * 3;
        }

        private static int fault() throws Exception {
            CudaWorkQueue q = CudaWorkQueue.open(0);
            MemorySegment trap = function(q, "trap_kernel");
            warmUp(q);
            q.launchSpin(1_000 * MS); // everything below is enqueued and every wait is past its spin budget before the trap
            long launched = System.nanoTime();
            launch(q, trap);
            int perKind = 50;
            CountDownLatch done = new CountDownLatch(count(q, perKind));
            Map<String, List<Outcome>> outcomes = startWaits(q, perKind, done);
            System.out.println("STARTED_WAITS in " + (System.nanoTime() - launched) / 1_000 + " us after the launch");
            long fault = faultTime(q);
            boolean all = done.await(20, TimeUnit.SECONDS);
            System.out.println("ALL_ENDED " + all);
            int rc = all ? 0 : 1;
            List<Long> latencies = new ArrayList<>();
            for (String kind : KINDS) {
                List<Outcome> os = outcomes.get(kind);
                boolean fatal = !os.isEmpty() && os.stream().allMatch(o -> o.error() instanceof DeviceLostException d
                        && d.kind() == ErrorKind.FATAL);
                long worst = os.stream().mapToLong(o -> o.atNanos() - fault).max().orElse(-1);
                long first = os.stream().mapToLong(o -> o.atNanos() - fault).min().orElse(-1);
                System.out.println(kind + " first=" + first / 1_000 + " us");
                os.forEach(o -> latencies.add(Math.max(0, (o.atNanos() - fault) / 1_000)));
                System.out.println(kind + " " + (fatal ? "FATAL" : "WRONG " + os.stream().map(o -> String.valueOf(
                        o.error())).distinct().toList()) + " n=" + os.size() + " worst=" + worst / 1_000 + " us");
                rc |= fatal ? 0 : 1;
            }
            System.out.println("LATENCY_US " + String.join(",", latencies.stream().map(String::valueOf).toList()));
            Object watch = faultWatch();
            System.out.println("WATCH detected=+" + (field(watch, "lastFaultDetectedNanos") - fault) / 1_000
                    + " us handled=+" + (field(watch, "lastFaultHandledNanos") - fault) / 1_000 + " us lastCheck="
                    + field(watch, "lastCheckNanos") / 1_000 + " us");
            return rc;
        }

        /**
         * A server's steady state: its error paths have run before (timeouts here), so the first fault is not also
         * the first time the JIT and the class loader meet the engine's error delivery.
         */
        private static void warmUp(CudaWorkQueue q) throws Exception {
            q.launchSpin(200 * MS);
            List<SyncPoint> points = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                points.add(q.recordEvent());
                points.add(q.advanceTimeline());
            }
            CountDownLatch timedOut = new CountDownLatch(points.size() + 2);
            for (SyncPoint p : points) {
                GpuSync.await(p, Duration.ofMillis(20)).subscribe(v -> { }, e -> timedOut.countDown(), timedOut::countDown);
            }
            for (int i = 0; i < 2; i++) {
                SyncPoint p = points.get(i);
                Thread.ofPlatform().daemon().start(() -> {
                    try {
                        p.await(Duration.ofMillis(20));
                    } catch (SyncException expected) {
                        // the timeout is the point
                    } finally {
                        timedOut.countDown();
                    }
                });
            }
            timedOut.await(10, TimeUnit.SECONDS);
            q.synchronize();
            points.forEach(p -> p.waiter().close());
        }

        private static int close() throws Exception {
            CudaWorkQueue q = CudaWorkQueue.open(0);
            warmUp(q);
            q.launchSpin(1_000 * MS);
            int perKind = 20;
            CountDownLatch done = new CountDownLatch(count(q, perKind));
            Map<String, List<Outcome>> outcomes = startWaits(q, perKind, done);
            SyncPoint probeAfter = q.recordEvent();
            Thread.sleep(100); // every wait is past its spin budget, behind stream callbacks
            long t0 = System.nanoTime();
            Thread closer = Thread.ofPlatform().start(q::close); // close() then drains the 1 s kernel
            boolean all = done.await(5, TimeUnit.SECONDS);
            long ended = System.nanoTime();
            System.out.println("ALL_ENDED " + all + " in " + (ended - t0) / 1_000 + " us");
            int rc = all ? 0 : 1;
            for (String kind : KINDS) {
                List<Outcome> os = outcomes.get(kind);
                boolean cancelled = !os.isEmpty() && os.stream().allMatch(o -> o.error() instanceof SyncCancelledException);
                long worst = os.stream().mapToLong(o -> o.atNanos() - t0).max().orElse(-1);
                System.out.println(kind + " " + (cancelled ? "CANCELLED" : "WRONG " + os.stream().map(o -> String.valueOf(
                        o.error())).distinct().toList()) + " n=" + os.size() + " worst=" + worst / 1_000 + " us");
                rc |= cancelled && worst < 50 * MS ? 0 : 1;
            }
            closer.join();
            try {
                probeAfter.isSignaled();
                System.out.println("AFTER_CLOSE probe did not fail");
                rc |= 1;
            } catch (SyncCancelledException expected) {
                probeAfter.waiter().close(); // the last point: the primary context is released after its event
                System.gc();
                Thread.sleep(200);
                System.out.println("AFTER_CLOSE ok");
            }
            return rc;
        }

        /** The process's {@code CudaFaultWatch} (package-private in gpusync-cuda): {@code CudaDriverService.get().faultWatch()}. */
        private static Object faultWatch() throws ReflectiveOperationException {
            Class<?> service = Class.forName("io.gpusync.cuda.CudaDriverService");
            java.lang.reflect.Method get = service.getDeclaredMethod("get");
            get.setAccessible(true);
            java.lang.reflect.Method watch = service.getDeclaredMethod("faultWatch");
            watch.setAccessible(true);
            return watch.invoke(get.invoke(null));
        }

        private static long field(Object o, String name) throws ReflectiveOperationException {
            java.lang.reflect.Field f = o.getClass().getDeclaredField(name);
            f.setAccessible(true);
            return f.getLong(o);
        }

        /** Spins on cuStreamQuery of the queue's stream until it reports the fault; returns when it did. */
        private static long faultTime(CudaWorkQueue q) {
            check(Cuda.cuCtxPushCurrent_v2(q.context()), "push");
            try {
                while (true) {
                    int r = Cuda.cuStreamQuery(q.stream());
                    if (r != 0 && r != 600) {
                        long t = System.nanoTime();
                        System.out.println("FAULT seen by cuStreamQuery: " + r);
                        return t;
                    }
                    Thread.onSpinWait();
                }
            } finally {
                Cuda.cuCtxPopCurrent_v2(Arena.global().allocate(ValueLayout.ADDRESS));
            }
        }

        private static MemorySegment function(CudaWorkQueue q, String name) throws Exception {
            String ptx = CudaWorkQueue.kernelsPtx();
            check(Cuda.cuCtxPushCurrent_v2(q.context()), "push");
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
                check(Cuda.cuModuleLoadData(p, Arena.global().allocateFrom(ptx)), "cuModuleLoadData");
                MemorySegment module = p.get(ValueLayout.ADDRESS, 0);
                check(Cuda.cuModuleGetFunction(p, module, arena.allocateFrom(name)), "cuModuleGetFunction");
                return MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
            } finally {
                Cuda.cuCtxPopCurrent_v2(Arena.global().allocate(ValueLayout.ADDRESS));
            }
        }

        private static void launch(CudaWorkQueue q, MemorySegment f) {
            check(Cuda.cuCtxPushCurrent_v2(q.context()), "push");
            try {
                check(Cuda.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, q.stream(), MemorySegment.NULL, MemorySegment.NULL),
                        "cuLaunchKernel");
            } finally {
                Cuda.cuCtxPopCurrent_v2(Arena.global().allocate(ValueLayout.ADDRESS));
            }
        }

        private static void check(int r, String what) {
            if (r != 0) {
                throw new AssertionError(what + " failed: " + r);
            }
        }
    }
}
