package io.gpusync.examples;

import io.gpusync.examples.device.MatrixChain;

import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The load client's check of a {@code /compute} answer: its {@code checksum} must be {@link MatrixChain#checksum} of
 * its {@code seed} and {@code rounds}, computed here on the CPU (once per seed and rounds, then remembered). An answer
 * without the three fields fails. Thread-safe.
 */
final class ChecksumCheck {
    private static final Pattern SEED = Pattern.compile("\"seed\":(-?\\d+)");
    private static final Pattern ROUNDS = Pattern.compile("\"rounds\":(\\d+)");
    private static final Pattern CHECKSUM = Pattern.compile("\"checksum\":(-?\\d+)");

    private record Key(long seed, int rounds) {
    }

    private final ConcurrentHashMap<Key, Integer> expected = new ConcurrentHashMap<>();

    /** Whether {@code body}'s checksum is the CPU's for its seed and rounds. */
    boolean matches(String body) {
        Matcher seed = SEED.matcher(body);
        Matcher rounds = ROUNDS.matcher(body);
        Matcher checksum = CHECKSUM.matcher(body);
        if (!seed.find() || !rounds.find() || !checksum.find()) {
            return false;
        }
        try {
            Key key = new Key(Long.parseLong(seed.group(1)), Integer.parseInt(rounds.group(1)));
            int want = expected.computeIfAbsent(key, k -> MatrixChain.checksum(k.seed(), k.rounds()));
            return Integer.parseInt(checksum.group(1)) == want;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
