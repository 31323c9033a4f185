package io.gpusync.examples.device;

import java.util.Locale;

/** Human-readable numbers for the demo's output. */
public final class Units {
    /** "µs" where standard output can print it, else "us". */
    private static final String MICROS = System.out.charset().newEncoder().canEncode('µ') ? "µs" : "us";

    private Units() {
    }

    /** {@code 850 ns}, {@code 212 µs}, {@code 1.42 ms}, {@code 2.50 s}. */
    public static String duration(long nanos) {
        if (nanos < 1_000) {
            return nanos + " ns";
        }
        if (nanos < 1_000_000) {
            return fmt(nanos / 1e3, MICROS);
        }
        if (nanos < 1_000_000_000) {
            return fmt(nanos / 1e6, "ms");
        }
        return fmt(nanos / 1e9, "s");
    }

    private static String fmt(double v, String unit) {
        return String.format(Locale.ROOT, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, unit);
    }

    /** {@code 0.2%}. */
    public static String percent(double fraction) {
        return number(fraction * 100) + "%";
    }

    /** A number without trailing zeros: {@code 10}, {@code 0.5}. */
    public static String number(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.3g", v).replaceAll("0+$", "");
    }

    /** {@code 12,345}. */
    public static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }
}
