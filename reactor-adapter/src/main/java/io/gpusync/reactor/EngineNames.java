package io.gpusync.reactor;

import io.gpusync.internal.ProcessServices;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The default names of engines built without one ({@code engine1}, {@code engine2}, …): numbered per process, so
 * that thread names and metric tags of two unnamed engines never collide. One instance per process, held by
 * {@link ProcessServices}. Thread-safe, never blocks.
 */
final class EngineNames {
    private final AtomicInteger unnamed = new AtomicInteger();

    static EngineNames inThisProcess() {
        return ProcessServices.get().service(EngineNames.class, EngineNames::new);
    }

    /** A new default name. */
    String next() {
        return "engine" + unnamed.incrementAndGet();
    }
}
