package io.gpusync.metal;

import io.gpusync.SyncPoint;
import io.gpusync.spi.Timeouts;

import java.time.Duration;

/**
 * The {@code timeoutMS} argument of {@code -[MTLSharedEvent waitUntilSignaledValue:timeoutMS:]} (a
 * {@code uint64_t} of milliseconds), by the shared {@link Timeouts} rules: {@code 0} probes; a positive
 * timeout is rounded <em>up</em> to whole milliseconds — 100 µs waits 1 ms, never 0, which would silently
 * mean "do not wait" (gpu-handle-types' rule; a sub-millisecond poll therefore observes up to 1 ms);
 * {@link SyncPoint#FOREVER} (anything beyond 2<sup>63</sup> ns) becomes {@code UINT64_MAX}, the API's
 * infinite, returned as {@code -1L}.
 */
final class SharedEventTimeouts {
    /** {@code UINT64_MAX} milliseconds: forever. */
    static final long INFINITE = -1L;

    private SharedEventTimeouts() {
    }

    /** {@code timeout} as {@code timeoutMS} (unsigned). */
    static long timeoutMs(Duration timeout) {
        return Timeouts.toMillisCeil(timeout, Long.MAX_VALUE, INFINITE);
    }

    /** A {@link io.gpusync.kit.WaitLoop} slice ({@link Long#MAX_VALUE} = wait forever) as {@code timeoutMS}. */
    static long timeoutMs(long sliceNanos) {
        return timeoutMs(sliceNanos == Long.MAX_VALUE ? SyncPoint.FOREVER : Duration.ofNanos(sliceNanos));
    }
}
