package io.gpusync.examples;

import io.gpusync.SyncException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.examples.device.Device;
import io.gpusync.examples.device.Work;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.GpuSyncMetrics;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The demo service: a Reactor Netty HTTP server whose requests submit work to a {@link Device} and answer
 * when its {@link SyncPoint} is signalled, awaited through a gpusync {@link SyncEngine} that shares the
 * server's own event loops — no thread per request.
 *
 * <ul>
 *   <li>{@code GET /work[?ms=…][&size=…][&timeoutMs=…]} — submits one unit of work ({@code ms}: its duration
 *       on the simulated and CUDA devices, default: the kernel model; {@code size}: OpenCL's kernel size;
 *       Vulkan: an empty submission) and answers {@code 200 {"backend":…,"waitedMicros":…,…}} when it is done;
 *       {@code 504} with a JSON error if it is not done within {@code timeoutMs} (default: the server's);
 *       {@code 400} for bad parameters ({@code ms} above {@value #MAX_WORK_MS}, {@code size} above
 *       {@value #MAX_WORK_SIZE}, {@code timeoutMs} above the server's maximum included), {@code 503} if the device
 *       fails, {@code 500} for any other error. A client that goes away cancels its wait, which frees it at once.</li>
 *   <li>{@code GET /batch?n=…[&inFlight=…][&ms=…][&size=…][&timeoutMs=…]} — submits {@code n} units (at most
 *       {@value #MAX_BATCH_UNITS}) through {@code awaitEach}, at most {@code inFlight} (default
 *       {@value #DEFAULT_BATCH_IN_FLIGHT}, at most {@value #MAX_BATCH_IN_FLIGHT}) submitted and not yet done, and
 *       streams {@code 200} NDJSON ({@code application/x-ndjson}): one line {@code {"unit":i,"waitedMicros":…}} per
 *       unit, in submission order, each as soon as it and every earlier unit are done. The client's own
 *       backpressure reaches the device: a slow reader holds back submission. If a unit fails or times out, the
 *       stream ends with one line {@code {"error":"timeout"|"device_error",…}} and the other units' waits are
 *       freed; a client that goes away frees them all at once. {@code 400} for bad or too large parameters.</li>
 *   <li>{@code GET /compute?seed=…[&await=gpusync|elastic-blocking|virtual-threads][&timeoutMs=…]} — one request of real
 *       work ({@link Device#compute}; CUDA: the input expanded from {@code seed} copied in, a matrix kernel, the result
 *       copied out), awaited through gpusync or one of the two baselines ({@link AwaitMode}); answers
 *       {@code 200 {"seed":…,"rounds":…,"checksum":…,"waitedMicros":…}}, which a client checks with
 *       {@link io.gpusync.examples.device.MatrixChain#checksum}. Errors as for {@code /work}.</li>
 *   <li>{@code GET /metrics} — Prometheus text: the engine's {@code gpusync_*} meters (pending waits,
 *       outcomes, wait duration and wake latency histograms) and the demo's {@code demo_work_*} ones.</li>
 *   <li>{@code GET /health} — {@code 200 {"status":"UP",…}}; {@code 503 {"status":"DOWN","reason":…}} while a device
 *       queue is stuck (has held unfinished work longer than {@link Options#stuckAfter()}), UP again once that
 *       work finishes.</li>
 * </ul>
 */
public final class DemoServer implements AutoCloseable {
    private static final String JSON = "application/json";
    private static final String NDJSON = "application/x-ndjson";
    /** The most units one {@code GET /batch} may submit. */
    public static final int MAX_BATCH_UNITS = 100_000;
    /** The most units of one {@code GET /batch} in flight (submitted, not yet done) at once. */
    public static final int MAX_BATCH_IN_FLIGHT = 1_024;
    /** The largest {@code ms} (duration of one unit of work, in milliseconds) of {@code /work} and {@code /batch}. */
    public static final long MAX_WORK_MS = 10_000;
    /** The largest {@code size} of one unit of work of {@code /work} and {@code /batch}. */
    public static final long MAX_WORK_SIZE = 100_000;
    /** {@code inFlight} of {@code GET /batch} when absent. */
    public static final int DEFAULT_BATCH_IN_FLIGHT = 64;
    private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    private final Device device;
    private final Duration defaultTimeout;
    private final Duration maxTimeout;
    private final Duration stuckAfter;
    private final LoopResources loops;
    private final PrometheusMeterRegistry registry;
    private final SyncEngine engine;
    private final boolean sharesServerLoops;
    private final int loopThreads;
    private volatile WaitPath lastPath;
    private final DisposableServer server;
    private final Timer ok;
    private final Timer timedOut;
    private final Timer failed;
    private final Counter cancelled;
    private final ComputeRoute compute;

    /**
     * Configuration.
     *
     * @param host           the address to bind ({@code 127.0.0.1} for loopback only)
     * @param port           the port, 0 for an ephemeral one
     * @param defaultTimeout the per-request timeout when {@code timeoutMs} is absent
     * @param maxTimeout     the largest {@code timeoutMs} accepted
     * @param loopThreads    the server's event loop threads (shared with the engine), 0 for Reactor Netty's default
     * @param stuckAfter     how long a device queue may hold unfinished work before {@code /health} says DOWN
     */
    public record Options(String host, int port, Duration defaultTimeout, Duration maxTimeout, int loopThreads,
                          Duration stuckAfter) {
        /** The default {@link #stuckAfter}: 30 s, three times the longest unit of work ({@value #MAX_WORK_MS} ms). */
        public static final Duration DEFAULT_STUCK_AFTER = Duration.ofSeconds(30);

        public Options {
            if (!stuckAfter.isPositive()) {
                throw new IllegalArgumentException("stuckAfter must be positive: " + stuckAfter);
            }
        }

        public static Options loopback() {
            return new Options("127.0.0.1", 0, Duration.ofSeconds(2), Duration.ofSeconds(60), 0, DEFAULT_STUCK_AFTER);
        }

        public Options withDefaultTimeout(Duration timeout) {
            return new Options(host, port, timeout, maxTimeout, loopThreads, stuckAfter);
        }

        public Options withStuckAfter(Duration threshold) {
            return new Options(host, port, defaultTimeout, maxTimeout, loopThreads, threshold);
        }
    }

    private DemoServer(Device device, Options options) {
        this.device = device;
        this.defaultTimeout = options.defaultTimeout();
        this.maxTimeout = options.maxTimeout();
        this.stuckAfter = options.stuckAfter();
        this.loopThreads = options.loopThreads() > 0 ? options.loopThreads() : LoopResources.DEFAULT_IO_WORKER_COUNT;
        this.loops = LoopResources.create("gpusync-demo", 1, loopThreads, true);
        this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        // The engine's fd watches and driver-callback hand-offs run on the server's own epoll loops.
        EventLoopGroup serverLoops = loops.onServer(true);
        SyncEngine.Builder builder = GpuSync.builder().name("demo");
        boolean shares;
        try {
            builder.eventLoopGroup(serverLoops); // refused unless they are Netty 4.2 native epoll loops
            shares = true;
        } catch (io.gpusync.SyncNotSupportedException notEpoll) {
            System.err.println("gpusync demo: the engine keeps loops of its own: " + notEpoll.getMessage());
            shares = false;
        }
        this.sharesServerLoops = shares;
        this.engine = builder.build();
        new GpuSyncMetrics(engine).withHistograms().bindTo(registry); // the demo plots wake and wait latency
        this.ok = workTimer("ok");
        this.timedOut = workTimer("timeout");
        this.failed = workTimer("error");
        this.compute = new ComputeRoute(device, engine, AwaitMode.GPUSYNC);
        this.cancelled = Counter.builder("demo.work.cancelled").description("requests whose client went away before the answer")
                .register(registry);
        try {
            this.server = HttpServer.create()
                    .host(options.host())
                    .port(options.port())
                    .runOn(loops)
                    .route(routes -> routes
                            .get("/work", this::work)
                            .get("/batch", this::batch)
                            .get("/compute", this::compute)
                            .get("/metrics", this::metrics)
                            .get("/health", this::health))
                    .bindNow(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            engine.dispose();
            loops.disposeLater().block(Duration.ofSeconds(5));
            throw e;
        }
    }

    /** Starts the service on {@code device} (which stays the caller's to close). */
    public static DemoServer start(Device device, Options options) {
        return new DemoServer(device, options);
    }

    private Timer workTimer(String outcome) {
        return Timer.builder("demo.work.latency").description("GET /work: request received → answer ready")
                .tag("outcome", outcome).publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(10_000)).maximumExpectedValue(Duration.ofSeconds(60))
                .register(registry);
    }

    private Mono<Void> work(HttpServerRequest request, HttpServerResponse response) {
        long received = System.nanoTime();
        Work work;
        Duration timeout;
        try {
            QueryStringDecoder query = new QueryStringDecoder(request.uri());
            work = work(query);
            timeout = timeout(query);
        } catch (IllegalArgumentException e) {
            return send(response, HttpResponseStatus.BAD_REQUEST, error("bad_request", e.getMessage(), 0));
        }
        Duration t = timeout;
        // The answer is built and written on this connection's own event loop: whatever thread sees the
        // completion (a device callback thread, another loop watching an fd) only hands it over.
        Executor[] connectionLoop = new Executor[1];
        request.withConnection(c -> connectionLoop[0] = c.channel().eventLoop());
        Scheduler onConnectionLoop = Schedulers.fromExecutor(connectionLoop[0]);
        return Mono.defer(() -> {
                    SyncPoint point = device.submit(work);
                    long submitted = System.nanoTime();
                    WaitPath path = engine.pathFor(point.waiter());
                    lastPath = path;
                    return engine.await(point, t).publishOn(onConnectionLoop).then(Mono.fromSupplier(() -> {
                        long done = System.nanoTime();
                        ok.record(done - received, TimeUnit.NANOSECONDS);
                        return new Answer(HttpResponseStatus.OK, Json.object()
                                .put("backend", device.backend())
                                .put("device", device.description())
                                .put("waitedMicros", (done - submitted) / 1_000)
                                .put("path", path.name())
                                .put("timeoutMs", t.toMillis())
                                .toString());
                    }));
                })
                .onErrorResume(e -> {
                    long micros = (System.nanoTime() - received) / 1_000;
                    if (e instanceof SyncTimeoutException) {
                        timedOut.record(System.nanoTime() - received, TimeUnit.NANOSECONDS);
                        return Mono.just(new Answer(HttpResponseStatus.GATEWAY_TIMEOUT, error("timeout",
                                "the work was not done within " + t.toMillis() + " ms", micros)));
                    }
                    failed.record(System.nanoTime() - received, TimeUnit.NANOSECONDS);
                    HttpResponseStatus status = e instanceof SyncException ? HttpResponseStatus.SERVICE_UNAVAILABLE
                            : HttpResponseStatus.INTERNAL_SERVER_ERROR;
                    return Mono.just(new Answer(status, error(e instanceof SyncException ? "device_error" : "internal_error",
                            String.valueOf(e.getMessage()), micros)));
                })
                .doOnCancel(cancelled::increment) // the client went away: the wait is released by the cancel
                .flatMap(a -> send(response, a.status(), a.body()));
    }

    private record Answer(HttpResponseStatus status, String body) {
    }

    private Mono<Void> compute(HttpServerRequest request, HttpServerResponse response) {
        QueryStringDecoder query = new QueryStringDecoder(request.uri());
        Duration t;
        try {
            t = timeout(query);
        } catch (IllegalArgumentException e) {
            return send(response, HttpResponseStatus.BAD_REQUEST, error("bad_request", e.getMessage(), 0));
        }
        Executor[] connectionLoop = new Executor[1];
        request.withConnection(c -> connectionLoop[0] = c.channel().eventLoop());
        return compute.answer(query, t, Schedulers.fromExecutor(connectionLoop[0]))
                .doOnCancel(cancelled::increment)
                .flatMap(a -> send(response, a.status(), a.body()));
    }

    /** One unit of a batch: its index, its point and when it was submitted. */
    private record Unit(int index, SyncPoint point, long submittedNanos) {
    }

    private Mono<Void> batch(HttpServerRequest request, HttpServerResponse response) {
        int n;
        int inFlight;
        Work work;
        Duration timeout;
        try {
            QueryStringDecoder query = new QueryStringDecoder(request.uri());
            n = boundedInt(query, "n", MAX_BATCH_UNITS)
                    .orElseThrow(() -> new IllegalArgumentException("n (the number of units) is required"));
            inFlight = boundedInt(query, "inFlight", MAX_BATCH_IN_FLIGHT).orElse(DEFAULT_BATCH_IN_FLIGHT);
            work = work(query);
            timeout = timeout(query);
        } catch (IllegalArgumentException e) {
            return send(response, HttpResponseStatus.BAD_REQUEST, error("bad_request", e.getMessage(), 0));
        }
        Duration t = timeout;
        long received = System.nanoTime();
        Flux<String> lines = Flux.range(0, n)
                .map(i -> { // runs only on demand: awaitEach keeps at most inFlight units submitted and not done
                    SyncPoint point = device.submit(work);
                    lastPath = engine.pathFor(point.waiter());
                    return new Unit(i, point, System.nanoTime());
                })
                .transform(engine.awaitEach(Unit::point, inFlight, t))
                .map(u -> Json.object().put("unit", u.index())
                        .put("waitedMicros", (System.nanoTime() - u.submittedNanos()) / 1_000).toString() + "\n")
                .onErrorResume(e -> {
                    long micros = (System.nanoTime() - received) / 1_000;
                    String line = e instanceof SyncTimeoutException
                            ? error("timeout", String.valueOf(e.getMessage()), micros)
                            : error(e instanceof SyncException ? "device_error" : "internal_error",
                            String.valueOf(e.getMessage()), micros);
                    return Mono.just(line + "\n");
                })
                .doOnCancel(cancelled::increment); // the client went away: every wait in flight is freed
        return response.status(HttpResponseStatus.OK).header(HttpHeaderNames.CONTENT_TYPE, NDJSON)
                .sendString(lines).then();
    }

    /** The unit of work {@code ms} and {@code size} ask for, each checked against its maximum. */
    private static Work work(QueryStringDecoder query) {
        Optional<Duration> ms = param(query, "ms")
                .map(v -> Duration.ofNanos(Math.round(parseAtMost("ms", v, MAX_WORK_MS, "the longest unit of work") * 1e6)));
        int size = param(query, "size")
                .map(v -> (int) Math.max(1, parseAtMost("size", v, MAX_WORK_SIZE, "the largest unit of work"))).orElse(1);
        return new Work(size, ms);
    }

    /** {@code timeoutMs}, or the server's default; at most the server's maximum. */
    private Duration timeout(QueryStringDecoder query) {
        Duration timeout = param(query, "timeoutMs")
                .map(v -> Duration.ofNanos(Math.round(parseNonNegative("timeoutMs", v) * 1e6))).orElse(defaultTimeout);
        if (timeout.compareTo(maxTimeout) > 0) {
            throw new IllegalArgumentException("timeoutMs must be at most " + maxTimeout.toMillis()
                    + " (the server's maximum timeout)");
        }
        return timeout;
    }

    private static double parseAtMost(String name, String value, long max, String what) {
        double d = parseNonNegative(name, value);
        if (d > max) {
            throw new IllegalArgumentException(name + " must be at most " + max + " (" + what + " the demo accepts): "
                    + value);
        }
        return d;
    }

    /** An integer parameter in [1, max], if present. */
    private static Optional<Integer> boundedInt(QueryStringDecoder query, String name, int max) {
        return param(query, name).map(v -> {
            long n;
            try {
                n = Long.parseLong(v);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " must be an integer: '" + v + "'");
            }
            if (n < 1 || n > max) {
                throw new IllegalArgumentException(name + " must be between 1 and " + max + ": " + n);
            }
            return (int) n;
        });
    }

    private String error(String code, String message, long waitedMicros) {
        return Json.object().put("error", code).put("message", message).put("backend", device.backend())
                .put("waitedMicros", waitedMicros).toString();
    }

    private static Mono<Void> send(HttpServerResponse response, HttpResponseStatus status, String body) {
        return response.status(status).header(HttpHeaderNames.CONTENT_TYPE, JSON)
                .sendString(Mono.just(body)).then();
    }

    private static Optional<String> param(QueryStringDecoder query, String name) {
        List<String> values = query.parameters().get(name);
        return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.getLast());
    }

    private static double parseNonNegative(String name, String value) {
        double d;
        try {
            d = Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a number: '" + value + "'");
        }
        if (!(d >= 0) || Double.isInfinite(d)) {
            throw new IllegalArgumentException(name + " must be a non-negative number: '" + value + "'");
        }
        return d;
    }

    private Mono<Void> metrics(HttpServerRequest request, HttpServerResponse response) {
        return response.header(HttpHeaderNames.CONTENT_TYPE, PROMETHEUS_TEXT)
                .sendString(Mono.fromSupplier(registry::scrape)).then();
    }

    /**
     * UP, or DOWN (503) while a device queue is stuck: it has held unfinished work for longer than
     * {@code stuckAfter} (timed-out requests' work included: a timeout frees the wait, not the queue). UP again
     * once that work finishes.
     */
    private Mono<Void> health(HttpServerRequest request, HttpServerResponse response) {
        OptionalLong oldest = device.oldestUnfinishedSubmission();
        long queuedNanos = oldest.isPresent() ? Math.max(0, System.nanoTime() - oldest.getAsLong()) : 0;
        boolean stuck = queuedNanos > stuckAfter.toNanos();
        Json body = Json.object()
                .put("status", stuck ? "DOWN" : "UP")
                .put("backend", device.backend())
                .put("device", device.description())
                .put("pendingWaits", engine.pendingWaits())
                .put("oldestQueuedMillis", TimeUnit.NANOSECONDS.toMillis(queuedNanos))
                .put("stuckAfterMillis", stuckAfter.toMillis())
                .put("sharesServerLoops", sharesServerLoops);
        if (stuck) {
            body.put("reason", "a device queue has held unfinished work for " + TimeUnit.NANOSECONDS.toSeconds(queuedNanos)
                    + " s, longer than " + stuckAfter.toMillis() + " ms (--stuck-after)");
        }
        return send(response, stuck ? HttpResponseStatus.SERVICE_UNAVAILABLE : HttpResponseStatus.OK, body.toString());
    }

    /** The bound port. */
    public int port() {
        return server.port();
    }

    /** The bound host. */
    public String host() {
        return server.host();
    }

    /** {@code http://host:port}. */
    public String baseUrl() {
        return "http://" + (host().contains(":") ? "[" + host() + "]" : host()) + ":" + port();
    }

    /** The engine awaiting the requests' points. */
    public SyncEngine engine() {
        return engine;
    }

    /** The registry behind {@code /metrics}. */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** The device. */
    public Device device() {
        return device;
    }

    /** The event loop threads the server (and the engine) runs on. */
    public int loopThreads() {
        return loopThreads;
    }

    /** Whether the engine runs on the server's own event loops (Netty 4.2 native epoll). */
    public boolean sharesServerLoops() {
        return sharesServerLoops;
    }

    /**
     * The most virtual threads alive at once in {@code /compute?await=virtual-threads} since the last call (platform
     * thread counts do not include them); then counts afresh.
     */
    public int takeVirtualThreadPeak() {
        return compute.takeVirtualThreadPeak();
    }

    /** The wait path the engine took for the last request's point, or {@code null} before the first. */
    public WaitPath waitPath() {
        return lastPath;
    }

    /** Stops the server, then the engine (failing what is still pending), then the loops. Not the device. */
    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(5));
        engine.dispose();
        loops.disposeLater(Duration.ZERO, Duration.ofSeconds(2)).block(Duration.ofSeconds(10));
    }
}
