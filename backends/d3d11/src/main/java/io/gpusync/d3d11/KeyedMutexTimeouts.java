package io.gpusync.d3d11;

import io.gpusync.SyncPoint;
import io.gpusync.spi.Timeouts;

import java.time.Duration;

/**
 * The timeout argument of {@code IDXGIKeyedMutex::AcquireSync(UINT64 Key, DWORD dwMilliseconds)}, by the
 * shared {@link Timeouts} rules: {@code 0} probes; a positive timeout is rounded <em>up</em> to whole
 * milliseconds (1 ns → 1 ms, never 0, which would mean "do not wait"); anything beyond the largest finite
 * {@code DWORD} ({@code 0xFFFFFFFE} ms ≈ 49.7 days), {@link SyncPoint#FOREVER} included, becomes
 * {@code INFINITE} ({@code 0xFFFFFFFF}). Values are returned as the unsigned {@code DWORD} in an
 * {@code int}.
 */
final class KeyedMutexTimeouts {
    /** Win32 {@code INFINITE}. */
    static final int INFINITE = 0xFFFF_FFFF;
    private static final long MAX_FINITE_MILLIS = 0xFFFF_FFFEL;

    private KeyedMutexTimeouts() {
    }

    /** {@code timeout} as {@code AcquireSync}'s {@code dwMilliseconds}. */
    static int acquireSyncMillis(Duration timeout) {
        return (int) Timeouts.toMillisCeil(timeout, MAX_FINITE_MILLIS, INFINITE & 0xFFFF_FFFFL);
    }

    /** A {@link io.gpusync.kit.WaitLoop} slice ({@link Long#MAX_VALUE} = wait forever) as {@code dwMilliseconds}. */
    static int acquireSyncMillis(long sliceNanos) {
        return acquireSyncMillis(sliceNanos == Long.MAX_VALUE ? SyncPoint.FOREVER : Duration.ofNanos(sliceNanos));
    }
}
