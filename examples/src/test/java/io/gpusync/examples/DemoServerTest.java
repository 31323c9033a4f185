package io.gpusync.examples;

import io.gpusync.examples.device.KernelModel;
import io.gpusync.examples.device.SimulatedDevice;
import io.micrometer.core.instrument.Counter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/** The service through real HTTP (Reactor Netty's client, loopback, ephemeral port). */
class DemoServerTest {
    private final List<AutoCloseable> toClose = new ArrayList<>();

    private record Reply(int status, String contentType, String body) {
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
    }

    private DemoServer start(KernelModel kernels, int queues, Duration defaultTimeout) {
        return start(kernels, queues, DemoServer.Options.loopback().withDefaultTimeout(defaultTimeout));
    }

    private DemoServer start(KernelModel kernels, int queues, DemoServer.Options options) {
        SimulatedDevice device = new SimulatedDevice(kernels, queues);
        toClose.add(device);
        DemoServer server = DemoServer.start(device, options);
        toClose.add(server);
        return server;
    }

    private HttpClient client(DemoServer server, int connections) {
        ConnectionProvider pool = ConnectionProvider.builder("test").maxConnections(connections).pendingAcquireMaxCount(-1).build();
        toClose.add(() -> pool.disposeLater().block(Duration.ofSeconds(10)));
        return HttpClient.create(pool).baseUrl(server.baseUrl());
    }

    private static Mono<Reply> get(HttpClient client, String uri) {
        return client.get().uri(uri).responseSingle((res, body) -> body.asString().defaultIfEmpty("")
                .map(b -> new Reply(res.status().code(), res.responseHeaders().get("Content-Type"), b)));
    }

    /** Polls {@code condition} until true or the (generous) deadline; returns its last value. */
    private static boolean eventually(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    @Test
    void aThousandConcurrentRequestsAllComplete() throws InterruptedException {
        // 1,000 queues of 20 ms kernels: every request is in flight at the same time
        DemoServer server = start(KernelModel.fixed(Duration.ofMillis(20)), 1000, Duration.ofSeconds(30));
        HttpClient client = client(server, 1000);

        List<Reply> replies = Flux.range(0, 1000)
                .flatMap(i -> get(client, "/work"), 1000)
                .collectList()
                .block(Duration.ofSeconds(120));

        assertThat(replies).hasSize(1000).allSatisfy(r -> {
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.contentType()).startsWith("application/json");
            assertThat(r.body()).contains("\"backend\":\"cpu\"").contains("\"waitedMicros\":").contains("\"path\":\"CALLBACK\"");
        });
        assertThat(eventually(() -> server.engine().pendingWaits() == 0)).as("pending waits drain to 0").isTrue();
        assertThat(server.registry().find("gpusync.waits").tag("outcome", "completed").counters().stream()
                .mapToDouble(Counter::count).sum()).isEqualTo(1000);
    }

    @Test
    void aDeviceSlowerThanTheTimeoutAnswers504WithAJsonError() throws InterruptedException {
        DemoServer server = start(KernelModel.fixed(Duration.ofSeconds(30)), 1, Duration.ofMillis(100));
        HttpClient client = client(server, 4);

        Reply byDefault = get(client, "/work").block(Duration.ofSeconds(30));
        Reply byParameter = get(client, "/work?timeoutMs=50").block(Duration.ofSeconds(30));

        for (Reply r : List.of(byDefault, byParameter)) {
            assertThat(r.status()).isEqualTo(504);
            assertThat(r.contentType()).startsWith("application/json");
            assertThat(r.body()).startsWith("{").endsWith("}").contains("\"error\":\"timeout\"").contains("\"message\":");
        }
        assertThat(byParameter.body()).contains("within 50 ms");
        assertThat(eventually(() -> server.engine().pendingWaits() == 0)).isTrue();
        assertThat(server.registry().get("gpusync.waits").tag("outcome", "timeout").counters().stream()
                .mapToDouble(Counter::count).sum()).isEqualTo(2);
    }

    @Test
    void workFasterThanATimeoutOverrideSucceeds() {
        DemoServer server = start(KernelModel.fixed(Duration.ofSeconds(30)), 1, Duration.ofMillis(100));
        // ?ms= overrides the device's model for this request; ?timeoutMs= the server's timeout
        Reply r = get(client(server, 1), "/work?ms=1&timeoutMs=10000").block(Duration.ofSeconds(30));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).contains("\"timeoutMs\":10000");
    }

    @Test
    void badParametersAre400() {
        DemoServer server = start(KernelModel.DEFAULT, 1, Duration.ofSeconds(1));
        HttpClient client = client(server, 1);
        for (String uri : List.of("/work?ms=abc", "/work?ms=-1", "/work?timeoutMs=999999999")) {
            Reply r = get(client, uri).block(Duration.ofSeconds(30));
            assertThat(r.status()).as(uri).isEqualTo(400);
            assertThat(r.body()).contains("\"error\":\"bad_request\"");
        }
    }

    @Test
    void msAndSizeAboveTheirDocumentedMaximaAre400() {
        DemoServer server = start(KernelModel.fixed(Duration.ofMillis(1)), 1, Duration.ofSeconds(10));
        HttpClient client = client(server, 1);
        for (String uri : List.of("/work?ms=10001", "/work?ms=1e9", "/batch?n=1&ms=1e9")) {
            Reply r = get(client, uri).block(Duration.ofSeconds(30));
            assertThat(r.status()).as(uri).isEqualTo(400);
            assertThat(r.body()).as(uri).contains("\"error\":\"bad_request\"")
                    .contains("ms must be at most 10000 (the longest unit of work the demo accepts)");
        }
        for (String uri : List.of("/work?size=100001", "/batch?n=1&size=1e6")) {
            Reply r = get(client, uri).block(Duration.ofSeconds(30));
            assertThat(r.status()).as(uri).isEqualTo(400);
            assertThat(r.body()).as(uri).contains("size must be at most 100000 (the largest unit of work the demo accepts)");
        }
        assertThat(server.engine().pendingWaits()).isZero();
        // the maxima themselves are accepted (the 10 s unit times out here: it is accepted, not refused)
        assertThat(get(client, "/work?size=100000&ms=0").block(Duration.ofSeconds(30)).status()).isEqualTo(200);
        assertThat(get(client, "/work?ms=10000&timeoutMs=1").block(Duration.ofSeconds(30)).status()).isEqualTo(504);
    }

    @Test
    void healthIsDownWhileAQueueIsStuckAndUpAgainOnceItMoves() throws InterruptedException {
        DemoServer server = start(KernelModel.fixed(Duration.ofMillis(1)), 2,
                DemoServer.Options.loopback().withStuckAfter(Duration.ofMillis(300)));
        HttpClient client = client(server, 2);
        assertThat(get(client, "/health").block(Duration.ofSeconds(30)).status()).isEqualTo(200);

        // a 2.5 s unit whose request gives up after 10 ms: the wait is gone, the work still holds its queue
        assertThat(get(client, "/work?ms=2500&timeoutMs=10").block(Duration.ofSeconds(30)).status()).isEqualTo(504);
        assertThat(server.engine().pendingWaits()).isZero();

        List<Reply> down = new ArrayList<>();
        assertThat(eventually(() -> {
            Reply r = get(client, "/health").block(Duration.ofSeconds(30));
            down.add(r);
            return r.status() == 503;
        })).as("DOWN once the queue has held the work for 300 ms").isTrue();
        assertThat(down.getLast().body()).contains("\"status\":\"DOWN\"").contains("\"stuckAfterMillis\":300")
                .contains("a device queue has held unfinished work for").contains("(--stuck-after)");

        assertThat(eventually(() -> get(client, "/health").block(Duration.ofSeconds(30)).status() == 200))
                .as("UP again once the unit is done").isTrue();
        assertThat(get(client, "/health").block(Duration.ofSeconds(30)).body()).contains("\"status\":\"UP\"")
                .contains("\"oldestQueuedMillis\":0");
    }

    @Test
    void aClientThatCancelsFreesItsWait() throws InterruptedException {
        DemoServer server = start(KernelModel.fixed(Duration.ofSeconds(60)), 1, Duration.ofSeconds(60));
        HttpClient client = client(server, 4);

        Disposable request = get(client, "/work").subscribe();
        assertThat(eventually(() -> server.engine().pendingWaits() == 1)).as("the request is waiting").isTrue();
        request.dispose(); // the client gives up: Reactor Netty closes the connection mid-request

        assertThat(eventually(() -> server.engine().pendingWaits() == 0)).as("the wait is freed").isTrue();
        assertThat(eventually(() -> server.registry().get("demo.work.cancelled").counter().count() == 1)).isTrue();
        assertThat(server.registry().get("gpusync.waits").tag("outcome", "cancelled").counters().stream()
                .mapToDouble(Counter::count).sum()).isEqualTo(1);
    }

    @Test
    void aClientThatClosesItsSocketFreesItsWait() throws Exception {
        DemoServer server = start(KernelModel.fixed(Duration.ofSeconds(60)), 1, Duration.ofSeconds(60));
        try (Socket socket = new Socket(server.host(), server.port())) {
            OutputStream out = socket.getOutputStream();
            out.write("GET /work HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(eventually(() -> server.engine().pendingWaits() == 1)).as("the request is waiting").isTrue();
        }
        assertThat(eventually(() -> server.engine().pendingWaits() == 0)).as("the wait is freed").isTrue();
    }

    @Test
    void metricsArePrometheusTextWithTheEngineMeters() {
        DemoServer server = start(KernelModel.fixed(Duration.ofMillis(1)), 1, Duration.ofSeconds(10));
        HttpClient client = client(server, 1);
        assertThat(get(client, "/work").block(Duration.ofSeconds(30)).status()).isEqualTo(200);

        Reply metrics = get(client, "/metrics").block(Duration.ofSeconds(30));

        assertThat(metrics.status()).isEqualTo(200);
        assertThat(metrics.contentType()).startsWith("text/plain");
        assertThat(metrics.body())
                .contains("gpusync_waits_pending{engine=\"demo\"}")
                .contains("outcome=\"timeout\"")
                .contains("outcome=\"cancelled\"")
                .contains("gpusync_wake_latency_seconds_bucket")
                .contains("gpusync_wait_duration_seconds_bucket")
                .contains("demo_work_latency_seconds_count{outcome=\"ok\"} 1")
                .contains("demo_work_cancelled_total");
        // the one wait completed by callback — or at once, if the 1 ms kernel was done before the engine probed
        double completed = metrics.body().lines()
                .filter(l -> l.matches("gpusync_waits_total\\{engine=\"demo\",outcome=\"completed\",path=\"(callback|immediate)\"} .*"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
        assertThat(completed).isEqualTo(1.0);
    }

    @Test
    void healthIs200() {
        DemoServer server = start(KernelModel.DEFAULT, 1, Duration.ofSeconds(1));
        Reply r = get(client(server, 1), "/health").block(Duration.ofSeconds(30));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).contains("\"status\":\"UP\"").contains("\"backend\":\"cpu\"").contains("\"pendingWaits\":0")
                .contains("\"stuckAfterMillis\":30000");
    }

    @Test
    void theEngineRunsOnTheServersOwnEventLoops() {
        DemoServer server = start(KernelModel.DEFAULT, 1, Duration.ofSeconds(1));
        assertThat(server.sharesServerLoops()).isTrue();
    }

    @Test
    void aBatchStreamsOneNdjsonLinePerUnitInSubmissionOrder() throws InterruptedException {
        // 8 queues, log-normal kernels: units finish out of order, the stream is in order
        DemoServer server = start(new KernelModel(Duration.ofMillis(1), 1.0, 0.0, 1.0), 8, Duration.ofSeconds(30));
        HttpClient client = client(server, 1);

        Reply r = get(client, "/batch?n=500&inFlight=32").block(Duration.ofSeconds(60));

        assertThat(r.status()).isEqualTo(200);
        assertThat(r.contentType()).startsWith("application/x-ndjson");
        List<String> lines = r.body().lines().toList();
        assertThat(lines).hasSize(500);
        for (int i = 0; i < 500; i++) {
            assertThat(lines.get(i)).startsWith("{\"unit\":" + i + ",\"waitedMicros\":").endsWith("}");
        }
        assertThat(eventually(() -> server.engine().pendingWaits() == 0)).isTrue();
    }

    @Test
    void aBatchNeverHasMoreThanInFlightUnitsWaiting() throws InterruptedException {
        DemoServer server = start(KernelModel.fixed(Duration.ofMillis(2)), 64, Duration.ofSeconds(30));
        java.util.concurrent.atomic.AtomicReference<Reply> reply = new java.util.concurrent.atomic.AtomicReference<>();
        get(client(server, 1), "/batch?n=400&inFlight=8").subscribe(reply::set);
        int most = 0;
        while (reply.get() == null) { // sampled: every sample is a lower bound of the true maximum
            most = Math.max(most, server.engine().pendingWaits());
            Thread.sleep(1);
        }
        assertThat(reply.get().body().lines().count()).isEqualTo(400);
        assertThat(most).isPositive().isLessThanOrEqualTo(8);
    }

    @Test
    void batchParametersOutOfBoundsAre400() {
        DemoServer server = start(KernelModel.DEFAULT, 1, Duration.ofSeconds(1));
        HttpClient client = client(server, 1);
        for (String uri : List.of("/batch", "/batch?n=0", "/batch?n=" + (DemoServer.MAX_BATCH_UNITS + 1),
                "/batch?n=10&inFlight=0", "/batch?n=10&inFlight=" + (DemoServer.MAX_BATCH_IN_FLIGHT + 1),
                "/batch?n=abc", "/batch?n=10&timeoutMs=999999999")) {
            Reply r = get(client, uri).block(Duration.ofSeconds(30));
            assertThat(r.status()).as(uri).isEqualTo(400);
            assertThat(r.body()).contains("\"error\":\"bad_request\"");
        }
        assertThat(server.engine().pendingWaits()).isZero();
    }

    @Test
    void aBatchUnitThatTimesOutEndsTheStreamWithAnErrorLineAndFreesTheOthers() throws InterruptedException {
        DemoServer server = start(KernelModel.fixed(Duration.ofSeconds(30)), 4, Duration.ofSeconds(30));
        Reply r = get(client(server, 1), "/batch?n=20&inFlight=4&timeoutMs=50").block(Duration.ofSeconds(30));

        assertThat(r.status()).isEqualTo(200);
        List<String> lines = r.body().lines().toList();
        assertThat(lines).hasSize(1);
        assertThat(lines.getFirst()).contains("\"error\":\"timeout\"").contains("awaitEach: item ");
        assertThat(eventually(() -> server.engine().pendingWaits() == 0)).isTrue();
    }

    @Test
    void aClientThatCancelsABatchFreesEveryWaitInFlight() throws InterruptedException {
        DemoServer server = start(KernelModel.fixed(Duration.ofSeconds(60)), 16, Duration.ofSeconds(60));
        HttpClient client = client(server, 1);

        Disposable request = get(client, "/batch?n=1000&inFlight=16").subscribe();
        assertThat(eventually(() -> server.engine().pendingWaits() == 16)).as("16 units waiting").isTrue();
        request.dispose();

        assertThat(eventually(() -> server.engine().pendingWaits() == 0)).as("all freed").isTrue();
        assertThat(server.registry().get("gpusync.waits").tag("outcome", "cancelled").counters().stream()
                .mapToDouble(Counter::count).sum()).isEqualTo(16);
    }
}
