package com.example.bootjar;

import io.gpusync.SyncPoint;
import io.gpusync.linux.EventFd;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A WebFlux application started from its fat jar: once up, it awaits an eventfd through the auto-configured
 * engine (on the server's epoll loops), prints what happened and exits 0 only if the wait took EPOLL.
 */
@SpringBootApplication
public class FatJarApplication {

    public static void main(String[] args) {
        ConfigurableApplicationContext context = SpringApplication.run(FatJarApplication.class,
                "--server.port=0", "--spring.main.banner-mode=off");
        int status = SpringApplication.exit(context, () -> context.getBean(Outcome.class).exitCode);
        System.exit(status);
    }

    static final class Outcome {
        volatile int exitCode = 1;
    }

    @Bean
    Outcome outcome() {
        return new Outcome();
    }

    @Bean
    ApplicationRunner awaitAnEventFd(SyncEngine engine, Outcome outcome) {
        return args -> {
            try (EventFd fd = EventFd.create()) {
                SyncPoint point = fd.point();
                WaitPath path = engine.pathFor(point.waiter());
                Schedulers.parallel().schedule(fd::signal, 20, TimeUnit.MILLISECONDS);
                engine.await(point, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
                System.out.println("eventfd wait completed on path " + path + " (engine " + engine.name() + ")");
                outcome.exitCode = path == WaitPath.EPOLL ? 0 : 2;
            }
        };
    }
}
