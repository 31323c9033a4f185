package io.gpusync.reactor;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

import java.util.Locale;

/**
 * The default {@link GpuSyncWaitObservationConvention}: the observation (and the span and timer handlers make of
 * it) is named {@value #NAME}, with
 * <ul>
 *   <li>low-cardinality keys {@code engine} (the engine's name), {@code backend} (the point's
 *       {@link io.gpusync.BackendKind}, in lower case), {@code path} (the {@link WaitPath} in lower case, as in
 *       {@link GpuSyncMetrics}) and, once the wait has terminated, {@code outcome} ({@code completed},
 *       {@code timeout}, {@code failed} or {@code cancelled});</li>
 *   <li>the high-cardinality key {@code point}: the point's description
 *       ({@link GpuSyncWaitContext#pointDescription()}).</li>
 * </ul>
 * A timed-out or failed wait also carries its exception as the observation's error. Extend it to add keys.
 * Stateless and thread-safe.
 */
public class DefaultGpuSyncWaitObservationConvention implements GpuSyncWaitObservationConvention {
    /** The observation's name. */
    public static final String NAME = "gpusync.wait";

    /** The shared instance. */
    public static final DefaultGpuSyncWaitObservationConvention INSTANCE = new DefaultGpuSyncWaitObservationConvention();

    /** A convention with the default name and keys. */
    public DefaultGpuSyncWaitObservationConvention() {
    }

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(GpuSyncWaitContext context) {
        KeyValues keys = KeyValues.of(
                KeyValue.of("engine", context.engine()),
                KeyValue.of("backend", context.backend().name().toLowerCase(Locale.ROOT)),
                KeyValue.of("path", context.path().name().toLowerCase(Locale.ROOT)));
        GpuSyncWaitContext.Outcome outcome = context.outcome();
        return outcome == null ? keys : keys.and(KeyValue.of("outcome", outcome.tagValue()));
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(GpuSyncWaitContext context) {
        return KeyValues.of(KeyValue.of("point", context.pointDescription()));
    }
}
