package com.example.mvc;

import io.gpusync.reactor.SyncEngine;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application started as its main method would (on a random port), hit by many concurrent requests with the
 * JDK's HTTP client. (Started by hand rather than with @SpringBootTest, as the WebFlux consumer is: Spring
 * Framework 7's JUnit extension needs JUnit 6, and this consumer keeps gpusync's JUnit 5.)
 */
class BlockingApplicationTest {
    private static final int REQUESTS = 200;
    private static final long DELAY_MS = 300;
    private static ConfigurableApplicationContext app;
    private static HttpClient http;

    @BeforeAll
    static void startTheApplication() {
        app = SpringApplication.run(BlockingApplication.class, "--server.port=0");
        http = HttpClient.newBuilder().executor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor())
                .build();
    }

    @AfterAll
    static void stopTheApplication() {
        if (app != null) {
            app.close();
        }
    }

    private static HttpRequest get(String pathAndQuery) {
        int port = Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
        return HttpRequest.newBuilder(URI.create("http://localhost:" + port + pathAndQuery))
                .timeout(Duration.ofSeconds(60)).build();
    }

    /**
     * 200 requests at once, each blocked 300 ms on its own point (half on host timelines, half on eventfds): every
     * one is answered correctly, from a virtual thread, and all together in far less than one after the other.
     */
    @Test
    void concurrentRequestsBlockOnTheirPointsOnVirtualThreads() {
        long start = System.nanoTime();
        List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            String path = i % 2 == 0 ? "/timeline?delayMs=" + DELAY_MS : "/eventfd?delayMs=" + DELAY_MS;
            responses.add(http.sendAsync(get(path), HttpResponse.BodyHandlers.ofString()));
        }
        for (int i = 0; i < REQUESTS; i++) {
            HttpResponse<String> r = responses.get(i).join();
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo(i % 2 == 0
                    ? "signalled timeline 1 on a virtual thread by engine spring"
                    : "signalled eventfd on a virtual thread by engine spring");
        }
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        System.out.println(REQUESTS + " concurrent blocking requests of " + DELAY_MS + " ms answered in " + tookMs + " ms");
        assertThat(tookMs).isGreaterThanOrEqualTo(DELAY_MS).isLessThan(REQUESTS * DELAY_MS / 4);
        assertThat(app.getBean(SyncEngine.class).pendingWaits()).isZero();
    }

    @Test
    void aPointNeverSignalledTimesOutWithSyncTimeoutException() throws Exception {
        HttpResponse<String> r = http.send(get("/timeline?delayMs=-1&timeoutMs=50"), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(504);
        assertThat(r.body()).isEqualTo("timed out: SyncTimeoutException");
        assertThat(app.getBean(SyncEngine.class).pendingWaits()).isZero();
    }
}
