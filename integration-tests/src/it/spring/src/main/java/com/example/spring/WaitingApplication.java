package com.example.spring;

import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.reactor.SyncEngine;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** A WebFlux application whose one endpoint awaits a point through the auto-configured engine. */
@SpringBootApplication
public class WaitingApplication {

    public static void main(String[] args) {
        SpringApplication.run(WaitingApplication.class, args);
    }

    @RestController
    static class WaitController {
        private final SyncEngine engine;

        WaitController(SyncEngine engine) {
            this.engine = engine;
        }

        /** Answers once a host timeline point, signalled {@code delayMs} later, is reached. */
        @GetMapping("/await")
        Mono<String> await(@RequestParam("delayMs") long delayMs) {
            CpuTimeline timeline = new CpuTimeline();
            SyncPoint point = timeline.at(1);
            Schedulers.parallel().schedule(() -> timeline.signal(1), delayMs, TimeUnit.MILLISECONDS);
            return engine.await(point, Duration.ofSeconds(10))
                    .then(Mono.fromCallable(() -> "signalled " + timeline.value() + " by engine " + engine.name()));
        }
    }
}
