package io.gpusync.examples;

import picocli.CommandLine;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses {@code 200us}, {@code 1.5ms}, {@code 10s}, {@code 2m} (also ISO-8601 {@code PT10S}). */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern P = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ns|us|µs|ms|s|m|min)");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    static Duration parse(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.startsWith("pt")) {
            return Duration.parse(v);
        }
        Matcher m = P.matcher(v);
        if (!m.matches()) {
            throw new CommandLine.TypeConversionException("not a duration: '" + value + "' (e.g. 200us, 1.5ms, 10s, 2m)");
        }
        double n = Double.parseDouble(m.group(1));
        double nanosPer = switch (m.group(2)) {
            case "ns" -> 1;
            case "us", "µs" -> 1e3;
            case "ms" -> 1e6;
            case "s" -> 1e9;
            default -> 60e9;
        };
        return Duration.ofNanos(Math.round(n * nanosPer));
    }
}
