package com.example.jpms;

import io.gpusync.SyncPoint;
import io.gpusync.linux.EventFd;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Awaits one eventfd through an engine of its own and exits 0 if the wait took the path named by the first
 * argument and everything ran on the module path; prints what it saw either way.
 */
public final class ModulePathApp {

    public static void main(String[] args) {
        WaitPath expected = WaitPath.valueOf(args[0]);
        boolean modular = ModulePathApp.class.getModule().isNamed() && SyncEngine.class.getModule().isNamed();
        SyncEngine engine = GpuSync.builder().name("jpms").build();
        WaitPath path;
        try (EventFd fd = EventFd.create()) {
            SyncPoint point = fd.point();
            path = engine.pathFor(point.waiter());
            Schedulers.parallel().schedule(fd::signal, 20, TimeUnit.MILLISECONDS);
            engine.await(point, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
        } finally {
            engine.dispose();
        }
        System.out.println("module path: " + modular + "; eventfd wait completed on path " + path + " (expected "
                + expected + "); Netty epoll module resolved: "
                + ModuleLayer.boot().findModule("io.netty.transport.classes.epoll").isPresent());
        System.exit(modular && path == expected ? 0 : 1);
    }
}
