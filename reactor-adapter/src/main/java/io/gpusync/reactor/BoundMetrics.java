package io.gpusync.reactor;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The metrics sinks one engine reports its waits to: one per Micrometer registry bound with
 * {@link GpuSyncMetrics#bindTo}, combined into one {@link EngineMetrics} ({@link EngineMetrics#NONE} while none,
 * which lets the engine skip the clock on its burst path).
 *
 * <p><b>Threading.</b> {@link #current()} is a volatile read from any thread; {@link #bind} is thread-safe (one
 * short lock) and idempotent per registry.
 */
final class BoundMetrics {
    private volatile EngineMetrics metrics = EngineMetrics.NONE;
    /** Registries bound so far (identity), guarded by itself. */
    private final Set<Object> registries = Collections.newSetFromMap(new IdentityHashMap<>());

    EngineMetrics current() {
        return metrics;
    }

    /** Adds the sink of {@code registry} (made by {@code sink}) unless that registry is bound already. */
    void bind(Object registry, Supplier<EngineMetrics> sink) {
        synchronized (registries) {
            if (!registries.add(registry)) {
                return;
            }
            EngineMetrics added = sink.get();
            EngineMetrics before = metrics;
            metrics = before == EngineMetrics.NONE ? added : EngineMetrics.both(before, added);
        }
    }
}
