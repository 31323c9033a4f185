package io.gpusync.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * Converts {@link Duration} timeouts to the units and sentinels of native wait APIs, with the rules of
 * gpusync's contract: negative is an error; {@link Duration#ZERO} is a probe; anything beyond the API's
 * range (including {@link io.gpusync.SyncPoint#FOREVER}) becomes the API's infinite sentinel; a positive
 * timeout below the API's granularity rounds <em>up</em> to one tick, never down to "do not wait". No
 * conversion overflows. Stateless and thread-safe.
 */
public final class Timeouts {
    private static final long NANOS_PER_MILLI = 1_000_000L;

    private Timeouts() {
    }

    /**
     * @return {@code timeout}
     * @throws NullPointerException     if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public static Duration requireValid(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout);
        }
        return timeout;
    }

    /**
     * The timeout in nanoseconds, or {@code infinite} when it does not fit in a signed 64-bit count of
     * nanoseconds (≈ 292 years; {@code FOREVER} included).
     */
    public static long toNanos(Duration timeout, long infinite) {
        requireValid(timeout);
        if (timeout.getSeconds() >= Long.MAX_VALUE / 1_000_000_000L) {
            return infinite;
        }
        return timeout.toNanos();
    }

    /** {@link #toNanos(Duration, long)} with {@link Long#MAX_VALUE} as "infinite". */
    public static long toNanos(Duration timeout) {
        return toNanos(timeout, Long.MAX_VALUE);
    }

    /** Whether {@code timeout} is beyond any finite native range (it then means "wait forever"). */
    public static boolean isForever(Duration timeout) {
        return toNanos(timeout) == Long.MAX_VALUE;
    }

    /**
     * The timeout in whole milliseconds, rounded up (1 ns → 1 ms), or {@code infinite} when it exceeds
     * {@code maxFinite} milliseconds (e.g. {@code poll}: {@code maxFinite = Integer.MAX_VALUE},
     * {@code infinite = -1}).
     */
    public static long toMillisCeil(Duration timeout, long maxFinite, long infinite) {
        long nanos = toNanos(timeout);
        if (nanos == Long.MAX_VALUE) {
            return infinite;
        }
        long millis = nanos / NANOS_PER_MILLI + (nanos % NANOS_PER_MILLI == 0 ? 0 : 1);
        return millis > maxFinite ? infinite : millis;
    }

    /** A human-readable form for messages ("forever", "0 (probe)", "250ms", "1.5s"). */
    public static String describe(Duration timeout) {
        if (isForever(timeout)) {
            return "forever";
        }
        if (timeout.isZero()) {
            return "0 (probe)";
        }
        return timeout.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
    }
}
