package io.gpusync.reactor;

import io.gpusync.ErrorKind;
import io.gpusync.SyncException;

import java.time.Instant;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * An engine's metrics sinks (one per bound registry) and the record of device losses that its
 * {@link EngineHealth} reports. Thread-safe; nothing here blocks.
 */
final class EngineMeters {
    /** The sinks of every registry the engine is bound to ({@link EngineMetrics#NONE} while none). */
    private volatile EngineMetrics sink = EngineMetrics.NONE;
    /** Registries bound so far (identity), guarded by itself. */
    private final Set<Object> boundRegistries = Collections.newSetFromMap(new IdentityHashMap<>());
    private final LongAdder deviceLostFailures = new LongAdder();
    private volatile DeviceLoss lastDeviceLost;

    EngineMetrics sink() {
        return sink;
    }

    /** Adds the sink of {@code registry} (made by {@code make}) unless the engine already reports to it. */
    void bind(Object registry, Supplier<EngineMetrics> make) {
        synchronized (boundRegistries) {
            if (!boundRegistries.add(registry)) {
                return;
            }
            EngineMetrics added = make.get();
            EngineMetrics before = sink;
            sink = before == EngineMetrics.NONE ? added : EngineMetrics.both(before, added);
        }
    }

    /** Counts a wait that failed with {@code error}: a {@link ErrorKind#FATAL} one is a device loss. */
    void failedWith(Throwable error) {
        if (error instanceof SyncException se && se.kind() == ErrorKind.FATAL) {
            lastDeviceLost = new DeviceLoss(se, Instant.now());
            deviceLostFailures.increment();
        }
    }

    EngineHealth health(String engine, int pendingWaits, boolean disposed) {
        DeviceLoss last = lastDeviceLost;
        return new EngineHealth(engine, pendingWaits, deviceLostFailures.sum(), last != null ? last.error : null,
                last != null ? last.at : null, disposed);
    }

    private record DeviceLoss(SyncException error, Instant at) {
    }
}
