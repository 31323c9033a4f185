package io.gpusync.reactor;

import java.util.concurrent.atomic.AtomicInteger;

/** Default names of unnamed engines in this process ({@code engine1}, {@code engine2}, …): a process service. */
final class EngineNames {
    private final AtomicInteger unnamed = new AtomicInteger();

    String next() {
        return "engine" + unnamed.incrementAndGet();
    }
}
