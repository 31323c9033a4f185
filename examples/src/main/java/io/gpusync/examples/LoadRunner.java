package io.gpusync.examples;

import io.gpusync.examples.device.MatrixChain;
import io.gpusync.examples.device.Units;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Drives a {@link DemoServer} over loopback with Reactor Netty's {@link HttpClient}: {@code concurrency}
 * request loops, each sending its next {@code GET /work} (or {@code GET /batch}) as soon as the last one is
 * answered, for a warm-up and then a measured period; shows progress and returns the latencies.
 */
public final class LoadRunner {
    private static final Pattern WAITED = Pattern.compile("\"waitedMicros\":(\\d+)");
    private static final long MAX_NANOS = TimeUnit.MINUTES.toNanos(10);

    /**
     * What to run.
     *
     * @param duration    the measured period
     * @param warmup      a period before it whose requests are not counted (JIT, connections)
     * @param concurrency requests in flight at once (one connection each)
     * @param query       the query string of each request, e.g. {@code ms=0.5}; empty for none
     * @param progress    how to show progress
     * @param endpoint    {@code /work} (one unit per request), {@code /batch} (the query says {@code n} and
     *                    {@code inFlight}; an answer is a stream of NDJSON lines, one per unit) or {@code /compute}
     *                    (each request gets a {@code seed} of its own, one of {@value #SEEDS}, and its answer's
     *                    checksum is checked against {@link MatrixChain#checksum}, computed here on the CPU)
     */
    public record Options(Duration duration, Duration warmup, int concurrency, String query, Progress progress,
                          String endpoint) {
        /** Requests to {@code /work}. */
        public Options(Duration duration, Duration warmup, int concurrency, String query, Progress progress) {
            this(duration, warmup, concurrency, query, progress, "/work");
        }
    }

    /** The distinct seeds {@code /compute} requests take (the CPU checks each once, then remembers it). */
    public static final int SEEDS = 1024;

    /** How progress is shown. */
    public enum Progress {
        /** A bar redrawn in place with carriage returns (for a terminal). */
        BAR,
        /** One line per second (for logs and pipes). */
        LINES,
        /** Nothing. */
        OFF;

        /** {@link #BAR} on a terminal, else {@link #LINES}. */
        public static Progress auto() {
            java.io.Console c = System.console();
            return c != null && c.isTerminal() ? BAR : LINES;
        }
    }

    /**
     * What happened in the measured period.
     *
     * @param latency      client-side request → answer, nanoseconds, 200 answers only
     * @param gpuWait      server-side submit → point signalled → Mono complete, microseconds (from the answers)
     * @param ok           200 answers
     * @param timeouts     504 answers
     * @param otherStatus  other HTTP statuses
     * @param clientErrors requests that got no answer (connection errors)
     * @param lastError    the last client error, or null
     * @param elapsedNanos the measured period's actual length
     * @param units        units done in 200 answers (one per {@code /work} answer; the unit lines of a
     *                     {@code /batch} answer)
     * @param cpu          CPU spent in the measured period, or null
     * @param threads      the most live platform threads of the process at once in the measured period, and the
     *                     most virtual threads the server had blocked at once ({@code /compute} only)
     * @param checks       {@code /compute} answers checked, and those whose checksum was wrong or missing
     */
    public record Result(Histogram latency, Histogram gpuWait, long ok, long timeouts, long otherStatus,
                         long clientErrors, Throwable lastError, long elapsedNanos, long units, ThreadCpu cpu,
                         Threads threads, Checks checks) {
        /** 200 answers per second. */
        public double throughput() {
            return ok * 1e9 / Math.max(1, elapsedNanos);
        }

        /** Units done per second. */
        public double unitThroughput() {
            return units * 1e9 / Math.max(1, elapsedNanos);
        }
    }

    /**
     * Threads of a measured period: the peak of live platform threads (JMX, the whole process), the peak of virtual
     * threads blocked in the server, and, at the period's end, the live platform threads that each await mode's
     * waiting runs on ({@link AwaitMode#awaitsOn}).
     */
    public record Threads(int platformPeak, int virtualPeak, Map<AwaitMode, Integer> awaiting) {
        /** Live platform threads of {@code mode}'s waiting at the end of the period, plus its blocked virtual threads. */
        public int awaitThreads(AwaitMode mode) {
            return awaiting.getOrDefault(mode, 0) + (mode == AwaitMode.VIRTUAL_THREADS ? virtualPeak : 0);
        }

        static Map<AwaitMode, Integer> awaitingNow() {
            Map<AwaitMode, Integer> by = new java.util.EnumMap<>(AwaitMode.class);
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                for (AwaitMode m : AwaitMode.values()) {
                    if (m.awaitsOn(t.getName())) {
                        by.merge(m, 1, Integer::sum);
                    }
                }
            }
            return by;
        }
    }

    /** Checksums checked, and how many of them were wrong or missing. */
    public record Checks(long checked, long failures) {
    }

    private final DemoServer server;
    private final Options options;
    private final PrintStream out;

    private final ConcurrentHistogram latency = new ConcurrentHistogram(MAX_NANOS, 3);
    private final ConcurrentHistogram gpuWait = new ConcurrentHistogram(TimeUnit.NANOSECONDS.toMicros(MAX_NANOS), 3);
    private final Recorder interval = new Recorder(MAX_NANOS, 2);
    private final LongAdder ok = new LongAdder();
    private final LongAdder units = new LongAdder();
    private final LongAdder timeouts = new LongAdder();
    private final LongAdder other = new LongAdder();
    private final LongAdder clientErrors = new LongAdder();
    private final LongAdder all = new LongAdder();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicReference<Throwable> lastError = new AtomicReference<>();
    private final LongAdder checked = new LongAdder();
    private final LongAdder checksumFailures = new LongAdder();
    private final ChecksumCheck checksums;
    private volatile long measureFrom;

    public LoadRunner(DemoServer server, Options options, PrintStream out) {
        this(server, options, out, new ChecksumCheck());
    }

    /** A runner that checks {@code /compute} answers with {@code checksums} (shared by runs: it remembers). */
    LoadRunner(DemoServer server, Options options, PrintStream out, ChecksumCheck checksums) {
        this.server = server;
        this.options = options;
        this.out = out;
        this.checksums = checksums;
    }

    /** Runs the load; blocks until done. */
    public Result run() {
        int n = options.concurrency();
        ConnectionProvider pool = ConnectionProvider.builder("gpusync-demo-load").maxConnections(n)
                .pendingAcquireMaxCount(-1).build();
        LoopResources clientLoops = LoopResources.create("gpusync-demo-load", 1,
                Math.clamp(Runtime.getRuntime().availableProcessors() / 2, 1, 4), true);
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gpusync-demo-progress");
            t.setDaemon(true);
            return t;
        });
        try {
            HttpClient client = HttpClient.create(pool).runOn(clientLoops).baseUrl(server.baseUrl())
                    .responseTimeout(Duration.ofSeconds(120));
            boolean compute = options.endpoint().equals("/compute");
            String uri = options.endpoint() + (options.query().isEmpty() ? "" : "?" + options.query());
            String seedPrefix = uri + (options.query().isEmpty() ? "?" : "&") + "seed=";
            long start = System.nanoTime();
            measureFrom = start + options.warmup().toNanos();
            long end = measureFrom + options.duration().toNanos();
            Mono<Void> one = Mono.defer(() -> {
                long t0 = System.nanoTime();
                inFlight.incrementAndGet();
                return client.get().uri(compute ? seedPrefix + ThreadLocalRandom.current().nextInt(SEEDS) : uri)
                        .responseSingle((response, body) -> body.asString().defaultIfEmpty("")
                                .map(text -> {
                                    record(t0, response.status().code(), text);
                                    return text;
                                }))
                        .onErrorResume(e -> {
                            if (t0 >= measureFrom) {
                                clientErrors.increment();
                            }
                            lastError.set(e);
                            return Mono.empty();
                        })
                        .doOnTerminate(inFlight::decrementAndGet)
                        .then();
            });
            java.util.concurrent.atomic.AtomicReference<ThreadCpu> cpuAtStart = new java.util.concurrent.atomic.AtomicReference<>();
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            ticker.schedule(() -> {
                cpuAtStart.set(ThreadCpu.now());
                mx.resetPeakThreadCount();
                server.takeVirtualThreadPeak();
            }, Math.max(0, measureFrom - System.nanoTime()), TimeUnit.NANOSECONDS);
            long period = options.progress() == Progress.BAR ? 200 : 1000;
            if (options.progress() != Progress.OFF) {
                ticker.scheduleAtFixedRate(() -> progress(start, end, false), period, period, TimeUnit.MILLISECONDS);
            }
            Flux.range(0, n)
                    .flatMap(i -> one.repeat(() -> System.nanoTime() - end < 0), n, 1)
                    .then()
                    .block(options.warmup().plus(options.duration()).plus(Duration.ofMinutes(3)));
            long elapsed = System.nanoTime() - measureFrom;
            ThreadCpu cpu = cpuAtStart.get() == null ? null : ThreadCpu.now().since(cpuAtStart.get());
            Threads threads = new Threads(mx.getPeakThreadCount(), server.takeVirtualThreadPeak(),
                    Threads.awaitingNow());
            ticker.shutdownNow();
            ticker.awaitTermination(1, TimeUnit.SECONDS);
            if (options.progress() != Progress.OFF) {
                progress(start, end, true);
            }
            return new Result(latency.copy(), gpuWait.copy(), ok.sum(), timeouts.sum(), other.sum(),
                    clientErrors.sum(), lastError.get(), elapsed, units.sum(), cpu, threads,
                    new Checks(checked.sum(), checksumFailures.sum()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } finally {
            ticker.shutdownNow();
            pool.disposeLater().block(Duration.ofSeconds(5));
            clientLoops.disposeLater(Duration.ZERO, Duration.ofSeconds(2)).block(Duration.ofSeconds(10));
        }
    }

    private void record(long t0, int status, String body) {
        long nanos = System.nanoTime() - t0;
        all.increment();
        if (t0 - measureFrom < 0) {
            return; // warm-up
        }
        switch (status) {
            case 200 -> {
                ok.increment();
                latency.recordValue(Math.min(nanos, MAX_NANOS));
                interval.recordValue(Math.min(nanos, MAX_NANOS));
                Matcher m = WAITED.matcher(body);
                boolean batch = body.startsWith("{\"unit\"");
                while (m.find()) { // one per /work answer; one per unit line of a /batch answer
                    gpuWait.recordValue(Math.min(Long.parseLong(m.group(1)), TimeUnit.NANOSECONDS.toMicros(MAX_NANOS)));
                    if (!batch) {
                        break;
                    }
                }
                units.add(batch ? body.lines().filter(l -> l.startsWith("{\"unit\"")).count() : 1);
                if (options.endpoint().equals("/compute")) {
                    checked.increment();
                    if (!checksums.matches(body)) {
                        checksumFailures.increment();
                    }
                }
            }
            case 504 -> timeouts.increment();
            default -> other.increment();
        }
    }

    private long lastCount;
    private long lastTick;

    private synchronized void progress(long start, long end, boolean last) {
        long now = System.nanoTime();
        boolean warming = now - measureFrom < 0;
        long total = end - start;
        double done = Math.clamp((double) (now - start) / total, 0, 1);
        int width = 24;
        int filled = (int) Math.round(done * width);
        long count = all.sum();
        double rate = last ? count * 1e9 / Math.max(1, now - start) // the final line: the whole run's average
                : lastTick == 0 ? 0 : (count - lastCount) * 1e9 / Math.max(1, now - lastTick);
        lastCount = count;
        lastTick = now;
        Histogram h = interval.getIntervalHistogram();
        String bar = "[" + "#".repeat(filled) + "-".repeat(width - filled) + "]";
        String line = String.format(Locale.ROOT, "%-9s %s %5.1f/%.1f s  %,9d answers  %,7.0f req/s  p99 %-9s  in flight %d",
                warming ? "warm-up" : last ? "done" : "measuring", bar,
                Math.min(now - start, total) / 1e9, total / 1e9, count, rate,
                h.getTotalCount() == 0 ? "-" : Units.duration(h.getValueAtPercentile(99)), inFlight.get());
        if (options.progress() == Progress.BAR) {
            out.print("\r" + line + "  ");
            if (last) {
                out.println();
            }
        } else if (!last) {
            out.println(line);
        }
        out.flush();
    }
}
