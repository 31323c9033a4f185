package io.gpusync.spring;

import io.gpusync.SyncPoint;
import io.gpusync.linux.EventFd;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** Finds out which event loops an engine runs on: the loop that completes an eventfd wait (the EPOLL path). */
final class EngineThreadsProbe {
    private EngineThreadsProbe() {
    }

    /** The thread that completes a wait on an eventfd signalled after the wait was registered. */
    static Thread epollCompletionThread(SyncEngine engine) throws Exception {
        try (EventFd fd = EventFd.create()) {
            SyncPoint point = fd.point();
            assertThat(engine.pathFor(point.waiter())).isEqualTo(WaitPath.EPOLL);
            AtomicReference<Thread> completedOn = new AtomicReference<>();
            CompletableFuture<Void> done = engine.await(point, Duration.ofSeconds(10))
                    .doOnSuccess(v -> completedOn.set(Thread.currentThread()))
                    .toFuture();
            fd.signal();
            done.get(10, TimeUnit.SECONDS);
            return completedOn.get();
        }
    }

    /** The threads of every loop of {@code group}. */
    static Set<Thread> threadsOf(EventLoopGroup group) throws Exception {
        Set<Thread> threads = new HashSet<>();
        for (EventExecutor loop : group) {
            threads.add(loop.submit((Callable<Thread>) Thread::currentThread).get(10, TimeUnit.SECONDS));
        }
        return threads;
    }

    /** Names of the live threads that start with {@code prefix}. */
    static Set<String> liveThreadsNamed(String prefix) {
        Set<String> names = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix)) {
                names.add(t.getName());
            }
        }
        return names;
    }
}
