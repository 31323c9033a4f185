package com.example.spring;

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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application started as its main method would (on a random port), called over HTTP with the JDK's client.
 * (Started by hand rather than with @SpringBootTest: Spring Framework 7's JUnit extension needs JUnit 6, and this
 * consumer keeps the JUnit 5 that gpusync is built with, so the test runs with nothing the gpusync build lacks.)
 */
class WaitingApplicationTest {
    private static final long DELAY_MS = 100;
    private static ConfigurableApplicationContext app;

    @BeforeAll
    static void startTheApplication() {
        app = SpringApplication.run(WaitingApplication.class, "--server.port=0");
    }

    @AfterAll
    static void stopTheApplication() {
        if (app != null) {
            app.close();
        }
    }

    @Test
    void theEngineIsTheAutoConfiguredOne() {
        assertThat(app.getBean(SyncEngine.class).name()).isEqualTo("spring");
    }

    @Test
    void aRequestIsAnsweredOnceItsPointIsSignalled() throws Exception {
        int port = Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/await?delayMs=" + DELAY_MS))
                .timeout(Duration.ofSeconds(20)).build();

        long start = System.nanoTime();
        HttpResponse<String> response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        long tookMs = (System.nanoTime() - start) / 1_000_000;

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("signalled 1 by engine spring");
        assertThat(tookMs).isGreaterThanOrEqualTo(DELAY_MS); // answered after the signal, not before
    }
}
