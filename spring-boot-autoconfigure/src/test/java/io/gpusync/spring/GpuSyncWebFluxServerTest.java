package io.gpusync.spring;

import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import io.gpusync.reactor.SyncEngine;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import org.springframework.context.annotation.Bean;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.LoopResources;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.gpusync.spring.EngineThreadsProbe.liveThreadsNamed;
import static io.gpusync.spring.EngineThreadsProbe.threadsOf;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real Spring Boot WebFlux application on Reactor Netty, on a random port, with gpusync auto-configured:
 * its endpoints await points through the auto-configured engine, signalled after a delay, over HTTP.
 */
class GpuSyncWebFluxServerTest {
    private static final long DELAY_MS = 100;
    private static ConfigurableApplicationContext app;
    private static HttpClient http;

    @BeforeAll
    static void startTheApplication() {
        app = new SpringApplicationBuilder(WaitingApp.class)
                .web(WebApplicationType.REACTIVE)
                .properties("server.port=0", "gpusync.name=web")
                .run();
        http = HttpClient.create().port(Integer.parseInt(app.getEnvironment().getProperty("local.server.port")));
    }

    @AfterAll
    static void stopTheApplication() {
        if (app != null) {
            app.close();
        }
    }

    @Test
    void aRequestAwaitsACpuTimelinePointSignalledLater() {
        long start = System.nanoTime();
        Map<String, String> reply = get("/timeline?delayMs=" + DELAY_MS);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(reply).containsEntry("engine", "web").containsEntry("path", "CALLBACK");
        // a host timeline completes its waits on the thread that signals it (here the Reactor timer's)
        assertThat(reply.get("completedOn")).startsWith("parallel-");
        assertThat(tookMs).isGreaterThanOrEqualTo(DELAY_MS); // answered after the signal, not before
    }

    @Test
    void theEngineRunsOnTheServersEventLoops() throws Exception {
        Map<String, String> reply = get("/eventfd?delayMs=" + DELAY_MS);

        Set<String> serverLoops = threadsOf(app.getBean(ReactorResourceFactory.class).getLoopResources()
                .onServer(LoopResources.DEFAULT_NATIVE)).stream().map(Thread::getName).collect(Collectors.toSet());
        assertThat(reply).containsEntry("path", "EPOLL");
        assertThat(serverLoops).contains(reply.get("handledOn"));   // the request was served on the server's loops
        assertThat(serverLoops).contains(reply.get("completedOn")); // and the engine's fd watch woke on one of them
        assertThat(liveThreadsNamed("gpusync-web-loop")).isEmpty(); // the engine started no loops of its own
    }

    @Test
    void eachWaitIsObservedAsAChildOfTheRequestsObservation() {
        StoppedObservations stopped = app.getBean(StoppedObservations.class);
        stopped.contexts.clear();

        get("/timeline?delayMs=" + DELAY_MS);

        // the request's observation stops after its response is written: the wait's has stopped before the reply
        Observation.Context wait = stopped.contexts.stream().filter(c -> "gpusync.wait".equals(c.getName()))
                .findFirst().orElseThrow(() -> new AssertionError("no gpusync.wait observation: " + stopped.contexts));
        assertThat(wait.getLowCardinalityKeyValue("engine").getValue()).isEqualTo("web");
        assertThat(wait.getLowCardinalityKeyValue("path").getValue()).isEqualTo("callback");
        assertThat(wait.getLowCardinalityKeyValue("outcome").getValue()).isEqualTo("completed");
        assertThat(wait.getParentObservation()).as("the request's observation").isNotNull();
        assertThat(wait.getParentObservation().getContextView().getName()).isEqualTo("http.server.requests");
    }

    private static Map<String, String> get(String uri) {
        String body = http.get().uri(uri).responseSingle((response, content) -> {
            assertThat(response.status().code()).isEqualTo(200);
            return content.asString();
        }).block(Duration.ofSeconds(30));
        return java.util.Arrays.stream(body.split("\n")).map(line -> line.split("=", 2))
                .collect(Collectors.toMap(kv -> kv[0], kv -> kv[1]));
    }

    /** The application: two endpoints that each await a point signalled {@code delayMs} later. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class WaitingApp {

        /** Spring Boot adds every ObservationHandler bean to the application's ObservationRegistry. */
        @Bean
        StoppedObservations stoppedObservations() {
            return new StoppedObservations();
        }

        @Bean
        RouterFunction<ServerResponse> waits(SyncEngine engine) {
            return RouterFunctions.route()
                    .GET("/timeline", request -> {
                        long delayMs = Long.parseLong(request.queryParam("delayMs").orElseThrow());
                        CpuTimeline timeline = new CpuTimeline();
                        SyncPoint point = timeline.at(1);
                        Schedulers.parallel().schedule(() -> timeline.signal(1), delayMs, TimeUnit.MILLISECONDS);
                        return reply(engine, point, engine.await(point, Duration.ofSeconds(10)));
                    })
                    .GET("/eventfd", request -> {
                        long delayMs = Long.parseLong(request.queryParam("delayMs").orElseThrow());
                        EventFd fd = EventFd.create();
                        SyncPoint point = fd.point();
                        Schedulers.parallel().schedule(fd::signal, delayMs, TimeUnit.MILLISECONDS);
                        return reply(engine, point, engine.await(point, Duration.ofSeconds(10)).doFinally(s -> fd.close()));
                    })
                    .build();
        }

        private static Mono<ServerResponse> reply(SyncEngine engine, SyncPoint point, Mono<Void> wait) {
            String handledOn = Thread.currentThread().getName();
            return wait.then(Mono.fromCallable(() -> "engine=" + engine.name()
                            + "\npath=" + engine.pathFor(point.waiter())
                            + "\nhandledOn=" + handledOn
                            + "\ncompletedOn=" + Thread.currentThread().getName()))
                    .flatMap(body -> ServerResponse.ok().bodyValue(body));
        }
    }

    /** Records the context of every observation that stops. */
    static final class StoppedObservations implements ObservationHandler<Observation.Context> {
        final List<Observation.Context> contexts = new CopyOnWriteArrayList<>();

        @Override
        public void onStop(Observation.Context context) {
            contexts.add(context);
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }
}
