package com.example.mvc;

import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import io.gpusync.reactor.SyncEngine;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A Spring MVC application on virtual threads whose endpoints block on GPU-style points with
 * {@link SyncEngine#block}: each request's virtual thread parks until the point is signalled, and its carrier
 * serves other requests meanwhile.
 */
@SpringBootApplication
public class BlockingApplication {

    public static void main(String[] args) {
        SpringApplication.run(BlockingApplication.class, args);
    }

    @RestController
    static class BlockController {
        /** Stands in for the GPU: signals each request's point {@code delayMs} after the request came. */
        private final ScheduledExecutorService device = Executors.newSingleThreadScheduledExecutor();
        private final SyncEngine engine;

        BlockController(SyncEngine engine) {
            this.engine = engine;
        }

        /** Blocks until a host timeline value, reached {@code delayMs} later, is signalled. */
        @GetMapping("/timeline")
        String timeline(@RequestParam("delayMs") long delayMs,
                        @RequestParam(name = "timeoutMs", defaultValue = "10000") long timeoutMs) {
            CpuTimeline timeline = new CpuTimeline();
            if (delayMs >= 0) {
                device.schedule(() -> timeline.signal(1), delayMs, TimeUnit.MILLISECONDS);
            }
            engine.block(timeline.at(1), Duration.ofMillis(timeoutMs));
            return answer("timeline " + timeline.value());
        }

        /** Blocks until an eventfd, written {@code delayMs} later, is readable. */
        @GetMapping("/eventfd")
        String eventFd(@RequestParam("delayMs") long delayMs) {
            try (EventFd fd = EventFd.create()) {
                SyncPoint point = fd.point();
                device.schedule(fd::signal, delayMs, TimeUnit.MILLISECONDS);
                engine.block(point, Duration.ofSeconds(10));
                return answer("eventfd");
            }
        }

        private String answer(String what) {
            return "signalled " + what + " on a " + (Thread.currentThread().isVirtual() ? "virtual" : "platform")
                    + " thread by engine " + engine.name();
        }

        @ExceptionHandler(SyncTimeoutException.class)
        @ResponseStatus(HttpStatus.GATEWAY_TIMEOUT)
        String timedOut(SyncTimeoutException e) {
            return "timed out: " + e.getClass().getSimpleName();
        }
    }
}
