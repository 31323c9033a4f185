package io.gpusync.reactor.soak;

import io.gpusync.SyncPoint;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.soak.Ledger.Expect;
import io.gpusync.test.vulkan.VulkanContext;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A soak of every backend found, at once, in one JVM: each source's worker keeps up to {@value #IN_FLIGHT}
 * scenarios going — single waits that are signalled (before or after subscription, from any thread), left to
 * time out, cancelled, raced by a cancel, ended by a failure, or whose handle is closed mid-wait; and
 * {@code awaitAll}/{@code awaitAny}/{@code awaitFirst}/{@code awaitEach} over several points — on engines
 * of several configurations, one of which is replaced and disposed with waits pending every few hundred
 * milliseconds, while Vulkan devices are created and closed with waits pending. Every wait is in the
 * {@link Ledger}. At the end it prints {@code SOAK PASS} or {@code SOAK FAIL} and exits 0 or 1.
 *
 * <pre>
 * java ... io.gpusync.reactor.soak.BackendSoak --seconds 120 [--cuda] [--grace-ms 5000] [--only opencl,vulkan]
 *     [--give-up-after 50] [--no-device-churn] [--rss-settles-after 90]
 * </pre>
 * With {@code --give-up-after N} a run that has counted N problems prints every thread and ends with
 * {@code SOAK FAIL} at the next progress report instead of running its course (a driver stall otherwise holds a
 * failed run for minutes). {@code --rss-settles-after S}: the drivers' RSS grows for their first S seconds, and the
 * leak check on RSS starts no earlier ({@link RssWindow}).
 * {@code --no-device-churn} leaves the Vulkan devices out: on NVIDIA 580, with EGL and D3D12 in the process, a device
 * destroy can spin in the driver for good (README, driver hazards), so NVIDIA runs use it.
 * Run it under glibc's malloc checker: {@code LD_PRELOAD=libc_malloc_debug.so.0 MALLOC_CHECK_=3 MALLOC_PERTURB_=N}
 * and the JVM options that keep Netty on the checked allocator ({@code ChildJvm.MALLOC_CHECKED_JVM_OPTIONS}), as
 * {@code BackendSoakTest} and {@code benchmarks/soak-runs} do; on glibc's own allocator with only the perturbation
 * where NVIDIA's drivers are installed ({@code ChildJvm.checkerBypass()}).
 */
public final class BackendSoak {
    static final int IN_FLIGHT = 8;
    /**
     * A bound on the GL backend's EGL threads, which never end: more than the GL waits lent to engines at once (32
     * at most in a process) and the EGL calls the soak's other threads can have in flight (a run here needs about
     * 15 threads in all, NVIDIA's about 11 before waits were lent), far fewer than one thread per call.
     */
    private static final int MAX_EGL_THREADS = 96;
    private static final Duration LONG = Duration.ofSeconds(5);
    private static final Duration[] SHORT = {Duration.ZERO, Duration.ofMillis(1), Duration.ofMillis(10),
            Duration.ofMillis(50)};

    private final long seconds;
    private final RssWindow rssWindow;
    private final Ledger ledger;
    private final TicketSources sources;
    private final Engines engines = new Engines();
    /** Where engine churn disposes engines from. */
    private final ScheduledExecutorService actors = Executors.newScheduledThreadPool(2,
            Thread.ofPlatform().name("soak-actor-", 0).daemon().factory());
    private final SignalLanes signalLanes = new SignalLanes();
    /** Finishing a ticket may wait for its signal to land: never on the threads that give the signals. */
    private final java.util.concurrent.ExecutorService finishers = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("soak-finisher-", 0).daemon().factory());
    private final Map<String, LongAdder> scenarios = new ConcurrentHashMap<>();
    private final AtomicInteger scenariosOpen = new AtomicInteger();
    private final AtomicLong devicesChurned = new AtomicLong();
    private final AtomicLong faultChildren = new AtomicLong();
    private final boolean cudaFaults;
    /** Whether Vulkan devices are created and destroyed with waits pending (off: to bisect a driver stall). */
    private final boolean deviceChurn;
    /** Problems after which the run ends at once (0: never). */
    private final int giveUpAfter;
    private volatile boolean stopping;

    private BackendSoak(long seconds, long graceMillis, boolean cuda, java.util.Set<String> only, int giveUpAfter,
                        boolean deviceChurn, long rssSettlesAfter) {
        this.seconds = seconds;
        this.rssWindow = new RssWindow(seconds, rssSettlesAfter);
        this.deviceChurn = deviceChurn;
        this.giveUpAfter = giveUpAfter;
        this.ledger = new Ledger(TimeUnit.MILLISECONDS.toNanos(graceMillis));
        this.sources = new TicketSources(cuda, ledger::problem);
        if (!only.isEmpty()) {
            sources.sources().removeIf(s -> !only.contains(s.name()));
        }
        this.cudaFaults = cuda && sources.sources().stream().anyMatch(s -> s.name().equals("cuda"));
    }

    public static void main(String[] args) throws Exception {
        long seconds = 60;
        long grace = 5_000;
        boolean cuda = false;
        int giveUpAfter = 0;
        boolean deviceChurn = true;
        long rssSettlesAfter = 0;
        java.util.Set<String> only = new java.util.HashSet<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--only" -> only.addAll(List.of(args[++i].split(",")));
                case "--seconds" -> seconds = Long.parseLong(args[++i]);
                case "--grace-ms" -> grace = Long.parseLong(args[++i]);
                case "--cuda" -> cuda = true;
                case "--give-up-after" -> giveUpAfter = Integer.parseInt(args[++i]);
                case "--no-device-churn" -> deviceChurn = false;
                case "--rss-settles-after" -> rssSettlesAfter = Long.parseLong(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        int rc = new BackendSoak(seconds, grace, cuda, only, giveUpAfter, deviceChurn, rssSettlesAfter).run();
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(rc);
    }

    private int run() throws InterruptedException {
        System.out.println("SOAK sources " + sources.sources().stream().map(TicketSources.Source::name).toList()
                + (sources.missing().isEmpty() ? "" : ", missing " + sources.missing()));
        warmUp();
        System.gc();
        ProcessResources baseline = ProcessResources.now();
        System.out.println("SOAK baseline " + baseline + " " + baseline.gpusyncThreads());
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        List<Thread> threads = new ArrayList<>();
        for (TicketSources.Source s : sources.sources()) {
            threads.add(Thread.ofPlatform().name("soak-" + s.name()).start(() -> work(s, end)));
        }
        threads.add(Thread.ofPlatform().name("soak-engines").start(() -> churnEngines(end)));
        if (deviceChurn && sources.sources().stream().anyMatch(s -> s.name().equals("vulkan"))) {
            threads.add(Thread.ofPlatform().name("soak-devices").start(() -> churnDevices(end)));
        }
        if (cudaFaults) {
            threads.add(Thread.ofPlatform().name("soak-cuda-faults").start(() -> injectCudaFaults(end)));
        }
        Thread watchdog = Thread.ofPlatform().daemon().name("soak-watchdog").start(this::watch);
        long nextReport = System.nanoTime();
        StallReport stallReport = new StallReport();
        long start = System.nanoTime();
        OptionalLong rssFrom = rssWindow.fromSeconds();
        ProcessResources mid = null;
        boolean overrunReported = false;
        for (Thread t : threads) {
            while (!t.join(Duration.ofSeconds(1))) {
                if (!overrunReported && System.nanoTime() - end > TimeUnit.SECONDS.toNanos(60)) {
                    overrunReported = true; // a worker inside a driver call that never returns: say where everyone is
                    ledger.problem(t.getName() + " still running 60 s after the end");
                    Ledger.dumpThreads(System.out);
                    StallReport.print(System.out, t.getName() + " still running 60 s after the end");
                }
                if (mid == null && rssFrom.isPresent()
                        && System.nanoTime() - start > TimeUnit.SECONDS.toNanos(rssFrom.getAsLong())) {
                    System.gc();
                    mid = ProcessResources.now(); // caches, arenas and drivers have grown by now: a leak keeps growing
                }
                if (System.nanoTime() - nextReport > 0) {
                    nextReport = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                    System.out.println("SOAK progress " + counts() + " " + ProcessResources.now() + " fdKinds="
                            + ProcessResources.fdKinds());
                    printBusy("gpusync-housekeeping", "gpusync-cleaner", "soak-devices");
                    stallReport.check(System.out);
                    if (giveUpAfter > 0 && ledger.problemCount() >= giveUpAfter) {
                        giveUp();
                    }
                }
            }
        }
        stopping = true;
        boolean drained = awaitDrained();
        int stillPending = engines.stillPending();
        engines.disposeChurned();
        System.gc();
        System.runFinalization();
        ProcessResources after = settle(baseline);
        watchdog.interrupt();
        ledger.findOverdue(System.out);
        return report(baseline, mid, after, drained, stillPending);
    }

    /** Ends a failed run now: every thread's stack and OS state, the verdict, exit 1 (threads in drivers stay). */
    private void giveUp() {
        String why = ledger.problemCount() + " problems (--give-up-after " + giveUpAfter + ")";
        Ledger.dumpThreads(System.out);
        StallReport.print(System.out, why);
        System.out.println("SOAK FAIL [gave up after " + why + "] seconds=" + seconds + " " + counts()
                + " devicesChurned=" + devicesChurned.get() + " enginesChurned=" + engines.churned.get());
        System.out.flush();
        Runtime.getRuntime().halt(1);
    }

    /** One scenario of each source and one engine created and disposed: drivers allocate lazily. */
    private void warmUp() throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        for (TicketSources.Source s : sources.sources()) {
            for (int i = 0; i < 4; i++) {
                scenario(s, new Random(i));
            }
        }
        engines.churn(new Random(0));
        while (scenariosOpen.get() > 0 && System.nanoTime() - end < 0) {
            Thread.sleep(10);
        }
    }

    private void work(TicketSources.Source source, long end) {
        Semaphore room = new Semaphore(IN_FLIGHT);
        Random r = new Random(source.name().hashCode() ^ System.nanoTime());
        while (System.nanoTime() - end < 0) {
            try {
                if (!room.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                scenario(source, r, room::release);
                Thread.sleep(1 + r.nextInt(3));
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void scenario(TicketSources.Source source, Random r) {
        scenario(source, r, () -> { });
    }

    /** Starts one scenario; {@code done} runs once its waits have ended and its tickets are finished. */
    private void scenario(TicketSources.Source source, Random r, Runnable done) {
        scenariosOpen.incrementAndGet();
        List<Ticket> tickets = new ArrayList<>();
        Runnable finish = () -> finishers.execute(() -> {
            for (Ticket t : tickets) {
                try {
                    t.finish();
                } catch (RuntimeException e) {
                    ledger.problem("finishing " + t + ": " + e + stack(e));
                }
            }
            scenariosOpen.decrementAndGet();
            done.run();
        });
        try {
            if (r.nextInt(4) == 0) {
                group(source, r, tickets, finish);
            } else {
                single(source, r, tickets, finish);
            }
        } catch (RuntimeException e) {
            ledger.problem("scenario on " + source.name() + ": " + e + stack(e));
            finish.run();
        }
    }

    private void single(TicketSources.Source source, Random r, List<Ticket> tickets, Runnable finish) {
        Ticket t = source.mint().apply(r);
        tickets.add(t);
        SyncEngine engine = engines.pick(r);
        int kind = r.nextInt(t.canFail() ? 7 : 6);
        if (t.signalsItself() && (kind == 1 || kind == 6)) {
            kind = 0;
        }
        String what = t.source() + "/" + scenarioName(kind);
        count(what);
        boolean heldByOthers = t.dependsOnOthers();
        switch (kind) {
            case 0 -> { // signalled, before or after subscription, from some thread
                Duration timeout = r.nextInt(4) == 0 ? SyncPoint.FOREVER : LONG;
                Ledger.Wait w = open(what, engine, t.signalsItself() || t.dependsOnOthers() ? Expect.ANY
                        : Expect.COMPLETE, -1, timeout, finish);
                w.boundedByTimeout = heldByOthers;
                if (r.nextInt(5) == 0) {
                    signal(t, w);
                }
                engine.await(t.waiter(), timeout).subscribe(w);
                later(source, r, () -> signal(t, w));
            }
            case 1 -> { // nobody signals it in time
                Duration timeout = SHORT[r.nextInt(SHORT.length)];
                engine.await(t.waiter(), timeout).subscribe(open(what, engine,
                        t.dependsOnOthers() ? Expect.ANY : Expect.TIMEOUT, -1, timeout, finish));
            }
            case 2 -> { // cancelled while pending
                Ledger.Wait w = open(what, engine, Expect.ANY, -1, LONG, finish);
                w.boundedByTimeout = heldByOthers;
                Duration timeout = r.nextBoolean() ? LONG : SyncPoint.FOREVER;
                w.endsOnlyByCancel = timeout.equals(SyncPoint.FOREVER);
                engine.await(t.waiter(), timeout).subscribe(w);
                later(source, r, w::cancel);
            }
            case 3 -> { // a signal and a cancel race
                Ledger.Wait w = open(what, engine, Expect.ANY, -1, LONG, finish);
                w.boundedByTimeout = heldByOthers;
                engine.await(t.waiter(), LONG).subscribe(w);
                later(source, r, () -> signal(t, w));
                later(source, r, w::cancel);
            }
            case 4 -> { // the application closes the handle while the wait is pending
                Duration timeout = Duration.ofMillis(100 + r.nextInt(400));
                Ledger.Wait w = open(what, engine, Expect.ANY, -1, timeout, finish);
                w.boundedByTimeout = heldByOthers;
                engine.await(t.waiter(), timeout).subscribe(w);
                later(source, r, () -> {
                    w.disturb();
                    t.closeWaiter();
                });
            }
            case 5 -> { // a short timeout that the signal may or may not beat
                Duration timeout = Duration.ofMillis(1 + r.nextInt(20));
                Ledger.Wait w = open(what, engine, Expect.ANY, -1, timeout, finish);
                w.boundedByTimeout = heldByOthers;
                engine.await(t.waiter(), timeout).subscribe(w);
                later(source, r, t::signal);
            }
            default -> { // the driver fails the point
                Ledger.Wait w = open(what, engine, Expect.ANY, -1, LONG, finish);
                w.boundedByTimeout = heldByOthers;
                engine.await(t.waiter(), LONG).subscribe(w);
                later(source, r, () -> {
                    w.disturb();
                    t.fail();
                    w.signalledNow();
                });
            }
        }
    }

    /** Signals {@code t}, telling the ledger before (the signal has started) and after (it has been given). */
    private static void signal(Ticket t, Ledger.Wait w) {
        w.signalling();
        t.signal();
        w.signalledNow();
    }

    private static String scenarioName(int kind) {
        return switch (kind) {
            case 0 -> "signal";
            case 1 -> "timeout";
            case 2 -> "cancel";
            case 3 -> "signal-cancel-race";
            case 4 -> "close-while-pending";
            case 5 -> "signal-timeout-race";
            default -> "fail";
        };
    }

    /** 2–4 points of this source (and sometimes a CPU one) through a group operator, all signalled. */
    private void group(TicketSources.Source source, Random r, List<Ticket> tickets, Runnable finish) {
        int n = 2 + r.nextInt(3);
        List<SyncPoint> points = new ArrayList<>();
        while (tickets.size() < n) {
            Ticket t = tickets.size() == n - 1 && r.nextInt(3) == 0 && !sources.sources().isEmpty()
                    ? sources.sources().get(0).mint().apply(r) : source.mint().apply(r);
            if (t.point() == null) {
                later(source, r, t::finish); // a fence: no point for a group
                continue;
            }
            tickets.add(t);
            points.add(t.point());
        }
        SyncEngine engine = engines.pick(r);
        int op = r.nextInt(5);
        String what = source.name() + "/" + List.of("awaitAll", "awaitAny", "awaitFirst", "awaitEach",
                "awaitEachUnordered").get(op);
        count(what);
        boolean cancel = r.nextInt(6) == 0;
        Expect expect = cancel || tickets.stream().anyMatch(Ticket::dependsOnOthers) ? Expect.ANY : Expect.COMPLETE;
        Ledger.Wait wait = open(what, engine, expect, op == 2 ? 1 : op >= 3 ? n : -1, LONG.multipliedBy(2), finish);
        wait.boundedByTimeout = tickets.stream().anyMatch(Ticket::dependsOnOthers);
        Publisher<?> operator = switch (op) {
            case 0 -> engine.awaitAll(points, LONG);
            case 1 -> engine.awaitAny(points, LONG);
            case 2 -> engine.awaitFirst(points, LONG);
            default -> Flux.range(0, n).transform(op == 3
                    ? engine.awaitEach(points::get, 1 + r.nextInt(n), LONG)
                    : engine.awaitEachUnordered(points::get, 1 + r.nextInt(n), LONG));
        };
        operator.subscribe(wait);
        List<Ticket> order = new ArrayList<>(tickets);
        java.util.Collections.shuffle(order, r);
        List<Ticket> signalled = order.subList(0, op == 1 || op == 2 ? 1 : order.size());
        AtomicInteger toSignal = new AtomicInteger(signalled.size());
        AtomicInteger toStart = new AtomicInteger(signalled.size());
        for (Ticket t : signalled) {
            later(source, r, () -> {
                if (toStart.decrementAndGet() == 0) {
                    wait.signalling(); // the last signal the operator needs is being given
                }
                t.signal();
                if (toSignal.decrementAndGet() == 0) {
                    wait.signalledNow(); // every signal the operator needs has been given
                }
            });
        }
        if (cancel) {
            later(source, r, wait::cancel);
        }
    }

    private Ledger.Wait open(String what, SyncEngine engine, Expect expect, int items, Duration timeout,
                             Runnable onEnd) {
        boolean unbounded = timeout.equals(SyncPoint.FOREVER);
        Ledger.Wait w = ledger.open(what, engine, expect, items,
                unbounded ? TimeUnit.SECONDS.toNanos(60) : timeout.toNanos(), onEnd);
        w.unbounded = unbounded;
        return w;
    }

    /** Runs {@code action} soon, from one of several threads: inline, or on the source's {@link SignalLanes lane}. */
    private void later(TicketSources.Source source, Random r, Runnable action) {
        Runnable guarded = () -> {
            try {
                action.run();
            } catch (RuntimeException e) {
                if (!(e instanceof IllegalStateException && stopping)) {
                    ledger.problem("action: " + e + stack(e));
                }
            }
        };
        SignalLanes.Path path = SignalLanes.Path.values()[r.nextInt(4)];
        long delayMicros = r.nextInt(path == SignalLanes.Path.ACTOR_LATER ? 20_000 : 5_000);
        signalLanes.run(source.name(), path, delayMicros, guarded);
    }

    private void count(String what) {
        scenarios.computeIfAbsent(what, k -> new LongAdder()).increment();
    }

    private void churnEngines(long end) {
        Random r = new Random();
        while (System.nanoTime() - end < 0) {
            try {
                Thread.sleep(200 + r.nextInt(600));
            } catch (InterruptedException e) {
                return;
            }
            engines.churn(r);
        }
    }

    /**
     * Vulkan devices created, waited on and closed with the waits still pending: the device is destroyed once
     * its last waiter is closed.
     */
    private void churnDevices(long end) {
        Random r = new Random();
        while (System.nanoTime() - end < 0) {
            try {
                Thread.sleep(2_000 + r.nextInt(2_000)); // a device every few seconds: drivers serialise create and destroy
                VulkanContext ctx = VulkanContext.create();
                devicesChurned.incrementAndGet();
                List<SyncPoint.Vulkan> points = new ArrayList<>();
                AtomicInteger open = new AtomicInteger(4);
                for (int i = 0; i < 4; i++) {
                    SyncPoint.Vulkan p = ctx.device().createTimelineSemaphore(0);
                    SyncPoint.Vulkan at1 = (SyncPoint.Vulkan) p.withValue(1);
                    points.add(p);
                    points.add(at1);
                    SyncEngine engine = engines.pick(r);
                    boolean signal = i % 2 == 0;
                    Duration timeout = Duration.ofMillis(50 + r.nextInt(100));
                    Ledger.Wait w = open("vulkan-device-churn/" + (signal ? "signal" : "timeout"), engine,
                            Expect.ANY, -1, timeout, () -> {
                                if (open.decrementAndGet() == 0) {
                                    finishers.execute(() -> points.forEach(q -> q.waiter().close()));
                                }
                            });
                    engine.await(at1, timeout).subscribe(w);
                    if (signal) {
                        ctx.device().hostSignal(p.semaphore(), 1);
                    }
                }
                ctx.close(); // waits pending: the device outlives the view until the last waiter is closed
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                ledger.problem("device churn: " + e + stack(e));
            }
        }
    }

    /**
     * Kernel faults, each in a child JVM of its own (a sticky error poisons its process's contexts): the child
     * traps a kernel behind 150 engine and 15 blocking CUDA waits and exits 0 only if every one of them failed
     * with a fatal {@code DeviceLostException} ({@code CudaFaultsGpuTest.Child}).
     */
    private void injectCudaFaults(long end) {
        while (System.nanoTime() - end < 0) {
            try {
                Thread.sleep(5_000);
                Process child = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java")
                        .toString(), "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                        "io.gpusync.reactor.backends.CudaFaultsGpuTest$Child", "fault")
                        .redirectErrorStream(true).start();
                java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
                Thread reader = Thread.ofPlatform().daemon().start(() -> {
                    try {
                        child.getInputStream().transferTo(out);
                    } catch (java.io.IOException ignored) {
                        // the child ended
                    }
                });
                boolean exited = child.waitFor(120, TimeUnit.SECONDS);
                if (!exited) {
                    child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
                reader.join(5_000);
                faultChildren.incrementAndGet();
                if (!exited || child.exitValue() != 0) {
                    String text = out.toString(java.nio.charset.StandardCharsets.UTF_8);
                    ledger.problem("CUDA fault child " + (exited ? "exited " + child.exitValue() : "hung") + ":\n"
                            + text.substring(Math.max(0, text.length() - 4_000)));
                }
            } catch (InterruptedException e) {
                return;
            } catch (java.io.IOException e) {
                ledger.problem("CUDA fault child: " + e);
            }
        }
    }

    /** The stacks of these threads where they are running (a release or a device churn stuck in a driver). */
    private static void printBusy(String... names) {
        java.util.Set<String> wanted = java.util.Set.of(names);
        Thread.getAllStackTraces().forEach((t, stack) -> {
            boolean named = wanted.contains(t.getName())
                    || wanted.stream().anyMatch(n -> t.getName().startsWith(n + "-")); // a housekeeping lane
            if (named && t.getState() == Thread.State.RUNNABLE && stack.length > 0) {
                StringBuilder b = new StringBuilder("SOAK busy " + t.getName());
                for (int i = 0; i < Math.min(stack.length, 25); i++) {
                    b.append("\n\tat ").append(stack[i]);
                }
                System.out.println(b);
            }
        });
    }

    private void watch() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                return;
            }
            ledger.findOverdue(System.out);
        }
    }

    private boolean awaitDrained() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (scenariosOpen.get() > 0 || ledger.liveCount() > 0) {
            if (System.nanoTime() - deadline > 0) {
                ledger.problem(scenariosOpen.get() + " scenarios and " + ledger.liveCount()
                        + " waits still open 90 s after the end");
                Ledger.dumpThreads(System.out);
                StallReport.print(System.out, "waits still open after the end");
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /** Waits (30 s at most) until fds and gpusync threads are back to the baseline; returns the last reading. */
    private static ProcessResources settle(ProcessResources baseline) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        ProcessResources now;
        do {
            System.gc();
            Thread.sleep(200);
            now = ProcessResources.now();
        } while ((now.fds() > baseline.fds() || now.engineThreadCount() > baseline.engineThreadCount())
                && System.nanoTime() - deadline < 0);
        return now;
    }

    private int report(ProcessResources baseline, ProcessResources mid, ProcessResources after, boolean drained,
                       int stillPending) {
        scenarios.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> System.out.println("SOAK scenario " + e.getKey() + " " + e.getValue().sum()));
        System.out.println("SOAK engines churned " + engines.churned.get() + ", Vulkan devices churned "
                + devicesChurned.get());
        String from = mid == null ? "" : " -> " + rssWindow.fromSeconds().orElseThrow() + " s " + mid;
        System.out.println("SOAK resources baseline " + baseline + from + " -> after " + after + " "
                + after.gpusyncThreads());
        if (mid == null) {
            System.out.println("SOAK " + rssWindow.notJudged());
        }
        List<String> failures = new ArrayList<>();
        if (after.fds() > baseline.fds()) {
            failures.add("fds " + baseline.fds() + " -> " + after.fds());
        }
        if (after.engineThreadCount() > baseline.engineThreadCount()) {
            failures.add("gpusync threads " + baseline.gpusyncThreads() + " -> " + after.gpusyncThreads());
        }
        if (after.eglThreadCount() > MAX_EGL_THREADS) {
            failures.add(after.eglThreadCount() + " EGL threads, more than the soak's " + MAX_EGL_THREADS
                    + " concurrent EGL calls could need");
        }
        if (mid != null) {
            rssWindow.failure(mid.rssKiB(), after.rssKiB()).ifPresent(failures::add);
        }
        if (!drained || ledger.problemCount() > 0) {
            failures.add(ledger.problemCount() + " problems");
        }
        if (stillPending > 0) {
            failures.add(stillPending + " waits still pending in the engines");
        }
        String verdict = failures.isEmpty() ? "SOAK PASS" : "SOAK FAIL " + failures;
        System.out.println(verdict + " seconds=" + seconds + " " + counts() + " rssGrowthMiB="
                + (mid == null ? "n/a" : Long.toString(RssWindow.growthMiB(mid.rssKiB(), after.rssKiB())))
                + " maxLateMs=" + Math.max(0, ledger.maxLateNanos.get() / 1_000_000)
                + " devicesChurned=" + devicesChurned.get() + " enginesChurned=" + engines.churned.get()
                + (cudaFaults ? " cudaFaultChildren=" + faultChildren.get() : ""));
        return failures.isEmpty() ? 0 : 1;
    }

    private String counts() {
        return "waits=" + ledger.subscribed.sum() + " completed=" + ledger.completed.sum() + " timedOut="
                + ledger.timedOut.sum() + " failed=" + ledger.failed.sum() + " cancelled=" + ledger.cancelled.sum()
                + " lost=" + ledger.lost.sum() + " heldUp=" + ledger.heldUp.sum() + " lateEnds="
                + ledger.lateEnds.sum() + " doubleEnds=" + ledger.doubleEnds.sum() + " wrongOutcomes="
                + ledger.wrongOutcomes.sum() + " notSignalled=" + ledger.notSignalled.sum() + " problems="
                + ledger.problemCount() + " open=" + ledger.liveCount();
    }

    private static String stack(Throwable t) {
        java.io.StringWriter w = new java.io.StringWriter();
        t.printStackTrace(new java.io.PrintWriter(w));
        return "\n" + w;
    }

    /** The engines waits go to: a few long-lived configurations, the default engine, and one replaced often. */
    private final class Engines {
        private final List<SyncEngine> stable = List.of(
                GpuSync.defaultEngine(),
                GpuSync.builder().name("soak-zero-spin").spinBudget(Duration.ZERO).build(),
                GpuSync.builder().name("soak-small-pool").waiterThreads(2).blockingSlice(Duration.ofMillis(20))
                        .pollerThreads(1).build());
        private volatile SyncEngine current = GpuSync.builder().name("soak-churn").build();
        private final AtomicLong churned = new AtomicLong();

        SyncEngine pick(Random r) {
            int i = r.nextInt(stable.size() + 1);
            return i == stable.size() ? current : stable.get(i);
        }

        /** A new churned engine; the old one is disposed with its waits pending, from one of several threads. */
        void churn(Random r) {
            SyncEngine old = current;
            current = GpuSync.builder().name("soak-churn").waiterThreads(1 + r.nextInt(4))
                    .spinBudget(r.nextBoolean() ? Duration.ZERO : Duration.ofNanos(50_000)).build();
            churned.incrementAndGet();
            switch (r.nextInt(4)) {
                case 0 -> old.dispose();
                case 1 -> Schedulers.parallel().schedule(old::dispose);
                case 2 -> actors.schedule(old::dispose, r.nextInt(50), TimeUnit.MILLISECONDS);
                default -> Schedulers.parallel().schedule(() -> old.disposeGracefully()
                        .timeout(Duration.ofSeconds(30))
                        .subscribe(v -> { }, e -> ledger.problem("disposeGracefully of " + old + ": " + e)));
            }
        }

        void disposeChurned() {
            current.dispose();
            for (SyncEngine e : stable) {
                if (e != GpuSync.defaultEngine()) {
                    e.dispose();
                }
            }
        }

        int stillPending() {
            return stable.stream().mapToInt(SyncEngine::pendingWaits).sum();
        }
    }
}
