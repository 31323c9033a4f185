package io.gpusync.examples;

import io.gpusync.SyncException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.examples.device.Computation;
import io.gpusync.examples.device.Device;
import io.gpusync.reactor.SyncEngine;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code GET /compute[?seed=…][&await=…][&timeoutMs=…]}: one {@link Device#compute} request (CUDA: copy in, matrix
 * kernel, copy out), awaited the way {@code await} says ({@link AwaitMode}, default the server's), answered
 * {@code 200 {"seed":…,"rounds":…,"checksum":…,"waitedMicros":…,…}} on the connection's event loop. {@code 504} when
 * the wait takes longer than the timeout (a baseline's blocked thread stays blocked until the work is done: a native
 * wait cannot be interrupted), {@code 503} when the device fails, {@code 400} for bad parameters.
 *
 * <p>Counts the virtual threads alive in {@link AwaitMode#VIRTUAL_THREADS} (their peak, for the showcase's report:
 * platform-thread counts do not include them). Thread-safe.
 */
final class ComputeRoute {
    private final Device device;
    private final SyncEngine engine;
    private final AwaitMode defaultMode;
    private final ThreadFactory virtualThreads = Thread.ofVirtual().name("gpusync-demo-vt-", 0).factory();
    private final AtomicInteger virtualAlive = new AtomicInteger();
    private final AtomicInteger virtualPeak = new AtomicInteger();

    ComputeRoute(Device device, SyncEngine engine, AwaitMode defaultMode) {
        this.device = device;
        this.engine = engine;
        this.defaultMode = defaultMode;
    }

    /** The answer's status and JSON body. */
    record Answer(HttpResponseStatus status, String body) {
    }

    /** Parses {@code query} and answers; {@code onConnectionLoop} is where the answer is built. */
    Mono<Answer> answer(QueryStringDecoder query, Duration timeout, Scheduler onConnectionLoop) {
        long received = System.nanoTime();
        long seed;
        AwaitMode mode;
        try {
            seed = param(query, "seed").map(ComputeRoute::parseSeed).orElseGet(() -> ThreadLocalRandom.current().nextLong());
            mode = param(query, "await").map(AwaitMode::named).orElse(defaultMode);
        } catch (IllegalArgumentException e) {
            return Mono.just(new Answer(HttpResponseStatus.BAD_REQUEST, error("bad_request", e.getMessage(), 0)));
        }
        return Mono.defer(() -> {
                    Computation c = device.compute(seed, mode != AwaitMode.GPUSYNC);
                    long submitted = System.nanoTime();
                    return await(mode, c, timeout).publishOn(onConnectionLoop)
                            .then(Mono.fromSupplier(() -> {
                                long done = System.nanoTime();
                                int checksum = c.checksum();
                                c.release(true);
                                return new Answer(HttpResponseStatus.OK, Json.object()
                                        .put("backend", device.backend())
                                        .put("await", mode.id())
                                        .put("onDevice", device.computesOnDevice())
                                        .put("seed", seed)
                                        .put("rounds", c.rounds())
                                        .put("checksum", checksum)
                                        .put("waitedMicros", (done - submitted) / 1_000)
                                        .toString());
                            }))
                            .doFinally(signal -> c.release(false)); // no-op after release(true)
                })
                .onErrorResume(e -> {
                    long micros = (System.nanoTime() - received) / 1_000;
                    if (e instanceof SyncTimeoutException || e instanceof TimeoutException) {
                        return Mono.just(new Answer(HttpResponseStatus.GATEWAY_TIMEOUT, error("timeout",
                                "the work was not done within " + timeout.toMillis() + " ms", micros)));
                    }
                    boolean sync = e instanceof SyncException;
                    return Mono.just(new Answer(sync ? HttpResponseStatus.SERVICE_UNAVAILABLE
                            : HttpResponseStatus.INTERNAL_SERVER_ERROR,
                            error(sync ? "device_error" : "internal_error", String.valueOf(e.getMessage()), micros)));
                });
    }

    private Mono<Void> await(AwaitMode mode, Computation c, Duration timeout) {
        return switch (mode) {
            case GPUSYNC -> engine.await(c.point(), timeout);
            // The baseline as services write it; Mono.timeout frees the request, not the blocked thread.
            case ELASTIC_BLOCKING -> Mono.<Void>fromRunnable(() -> device.awaitBlocking(c.point(), timeout))
                    .subscribeOn(Schedulers.boundedElastic())
                    .timeout(timeout);
            case VIRTUAL_THREADS -> Mono.<Void>create(sink -> virtualThreads.newThread(() -> {
                // counted while blocked only: the answer (and the client's next request) comes after the count drops
                int alive = virtualAlive.incrementAndGet();
                virtualPeak.accumulateAndGet(alive, Math::max);
                Throwable failure = null;
                try {
                    device.awaitBlocking(c.point(), timeout);
                } catch (Throwable t) {
                    failure = t;
                } finally {
                    virtualAlive.decrementAndGet();
                }
                if (failure == null) {
                    sink.success();
                } else {
                    sink.error(failure);
                }
            }).start()).timeout(timeout);
        };
    }

    /** The most virtual threads alive at once since the last call (then starts counting afresh). */
    int takeVirtualThreadPeak() {
        return virtualPeak.getAndSet(virtualAlive.get());
    }

    private String error(String code, String message, long waitedMicros) {
        return Json.object().put("error", code).put("message", message).put("backend", device.backend())
                .put("waitedMicros", waitedMicros).toString();
    }

    private static java.util.Optional<String> param(QueryStringDecoder query, String name) {
        List<String> values = query.parameters().get(name);
        return values == null || values.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(values.getLast());
    }

    private static long parseSeed(String v) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("seed must be an integer: '" + v + "'");
        }
    }
}
