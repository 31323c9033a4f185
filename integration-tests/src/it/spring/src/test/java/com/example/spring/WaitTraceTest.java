package com.example.spring;

import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The trace of one request, recorded by Micrometer Tracing's test tracer on the application's ObservationRegistry
 * (Spring Boot adds every ObservationHandler bean to it): the request's server span holds a {@code gpusync.wait}
 * span — the auto-configured engine observed the wait, as a child of the observation WebFlux put in the request's
 * Reactor Context. (Started by hand, like WaitingApplicationTest, to keep JUnit 5.)
 */
class WaitTraceTest {
    private static ConfigurableApplicationContext app;

    @BeforeAll
    static void startTheApplicationWithATestTracer() {
        app = SpringApplication.run(new Class<?>[] {WaitingApplication.class, TestTracing.class},
                new String[] {"--server.port=0"});
    }

    @AfterAll
    static void stopTheApplication() {
        if (app != null) {
            app.close();
        }
    }

    @Test
    void theTraceOfOneRequestHoldsAGpusyncWaitSpanUnderTheRequestsSpan() throws Exception {
        SimpleTracer tracer = app.getBean(SimpleTracer.class);
        int port = Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/await?delayMs=50"))
                .timeout(Duration.ofSeconds(20)).build();

        HttpResponse<String> response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);

        // the server span ends once the response is written, possibly just after the client has read it
        SimpleSpan server = awaitSpan(tracer, "http get /await"); // WebFlux's span name: method and route
        SimpleSpan wait = awaitSpan(tracer, "gpusync.wait");
        assertThat(wait.getTraceId()).isEqualTo(server.getTraceId());
        assertThat(wait.getParentId()).as("the gpusync.wait span's parent").isEqualTo(server.getSpanId());
        // the path: callback, or immediate where the request subscribed after the signal (a cold first request)
        assertThat(wait.getTags()).containsEntry("engine", "spring").containsEntry("backend", "cpu")
                .containsEntry("outcome", "completed").containsKeys("path", "point");
        assertThat(wait.getEndTimestamp()).isBeforeOrEqualTo(server.getEndTimestamp());
    }

    private static SimpleSpan awaitSpan(SimpleTracer tracer, String name) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            List<SimpleSpan> named = tracer.getSpans().stream().filter(s -> name.equals(s.getName())).toList();
            if (!named.isEmpty() || System.nanoTime() > deadline) {
                assertThat(named).as("spans named %s among %s", name, tracer.getSpans()).hasSize(1);
                return named.get(0);
            }
            Thread.sleep(10);
        }
    }

    /** Micrometer Tracing's in-memory tracer as the application's tracing handler. */
    @Configuration(proxyBeanMethods = false)
    static class TestTracing {
        @Bean
        SimpleTracer simpleTracer() {
            return new SimpleTracer();
        }

        @Bean
        DefaultTracingObservationHandler tracingObservationHandler(SimpleTracer tracer) {
            return new DefaultTracingObservationHandler(tracer);
        }
    }
}
