package io.gpusync.reactor;

import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncException;

import java.time.Instant;
import java.util.Optional;

/**
 * A snapshot of what a health check needs to know about one {@link SyncEngine}, taken by
 * {@link SyncEngine#health()}: its pending waits and the waits that failed because a device (or context) is
 * gone — a {@link DeviceLostException} or any {@link SyncException} of kind {@link ErrorKind#FATAL}.
 *
 * <p>The counts are cumulative over the engine's life: a health check that should recover once the device is
 * replaced compares {@link #deviceLostFailures()} with its previous reading or looks at
 * {@link #lastDeviceLostAt()}. Immutable; taking one costs a few volatile reads and never blocks.
 *
 * @param engine             the engine's {@link SyncEngine#name() name}
 * @param pendingWaits       waits started and not yet terminated
 * @param deviceLostFailures waits that failed with a {@link ErrorKind#FATAL} error since the engine was built
 * @param lastDeviceLost     the latest such error, or {@code null} if there was none
 * @param lastDeviceLostAt   when the engine saw it, or {@code null} if there was none
 * @param disposed           whether the engine has been disposed (it then fails every wait)
 */
public record EngineHealth(String engine, int pendingWaits, long deviceLostFailures, SyncException lastDeviceLost,
                           Instant lastDeviceLostAt, boolean disposed) {

    /** Whether any wait of this engine has failed because its device or context was lost. */
    public boolean deviceLost() {
        return deviceLostFailures > 0;
    }

    /** {@link #lastDeviceLost()}, if any. */
    public Optional<SyncException> lastDeviceLostFailure() {
        return Optional.ofNullable(lastDeviceLost);
    }
}
