package io.gpusync.reactor;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Names and creates an engine's platform daemon threads: {@code gpusync-<engine>-<role>-<n>}. */
final class EngineThreads implements ThreadFactory {
    private final String prefix;
    private final AtomicInteger count = new AtomicInteger();

    EngineThreads(String engineName, String role) {
        this.prefix = "gpusync-" + engineName + "-" + role + "-";
    }

    @Override
    public Thread newThread(Runnable r) {
        Thread t = Thread.ofPlatform().name(prefix + count.incrementAndGet()).daemon(true).unstarted(r);
        t.setUncaughtExceptionHandler((th, e) -> System.getLogger(SyncEngine.class.getName())
                .log(System.Logger.Level.ERROR, "uncaught in " + th.getName(), e));
        return t;
    }
}
