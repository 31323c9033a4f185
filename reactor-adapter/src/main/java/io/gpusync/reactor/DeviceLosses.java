package io.gpusync.reactor;

import io.gpusync.ErrorKind;
import io.gpusync.SyncException;

import java.time.Instant;
import java.util.concurrent.atomic.LongAdder;

/**
 * What {@link SyncEngine#health()} reports of failed waits: how many failed because a device or context was lost
 * (any {@link ErrorKind#FATAL} {@link SyncException}), and the last such error and when. Thread-safe, never blocks.
 */
final class DeviceLosses {
    private final LongAdder count = new LongAdder();
    private volatile Loss last;

    /** Counts {@code error} if it is a device loss. */
    void record(Throwable error) {
        if (error instanceof SyncException se && se.kind() == ErrorKind.FATAL) {
            last = new Loss(se, Instant.now());
            count.increment();
        }
    }

    /** The engine's health now. */
    EngineHealth health(String engine, int pending, boolean disposed) {
        Loss l = last;
        return new EngineHealth(engine, pending, count.sum(), l != null ? l.error : null, l != null ? l.at : null,
                disposed);
    }

    private record Loss(SyncException error, Instant at) {
    }
}
