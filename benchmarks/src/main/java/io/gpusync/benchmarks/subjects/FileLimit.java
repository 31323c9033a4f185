package io.gpusync.benchmarks.subjects;

import io.gpusync.bindings.libc.ErrnoCalls;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The process's open-files limit ({@code RLIMIT_NOFILE}), read and raised through {@code getrlimit}/{@code setrlimit}
 * (FFM downcalls of {@link ErrnoCalls}): the harness raises its soft limit to the hard one before it runs, so that
 * fd-backed subjects (one eventfd per pending wait) can reach 100,000 pending where the hard limit allows; where it
 * does not, {@link #describe} says so and the cells that need more are reported as not run.
 *
 * <p>Not thread-safe in intent (call it once, at start-up); never throws for a refusal — the outcome says it.
 */
public final class FileLimit {
    private FileLimit() {
    }

    /** What {@link #raiseSoftToHard} found and did. */
    public record Outcome(long softBefore, long soft, long hard, String error) {
        /** One line for the log and the report. */
        public String describe(long wanted) {
            String base = "RLIMIT_NOFILE: soft " + str(softBefore) + (soft != softBefore ? " → " + str(soft) : "")
                    + ", hard " + str(hard);
            if (error != null) {
                return base + " (raising failed: " + error + ")";
            }
            if (wanted > 0 && hard != ErrnoCalls.RLIM_INFINITY && Long.compareUnsigned(hard, wanted) < 0) {
                return base + " — the hard limit is below the " + String.format(java.util.Locale.ROOT, "%,d", wanted)
                        + " fds that eventfd at the largest N needs; those cells are not run here"
                        + " (raise it: `ulimit -Hn` as root, LimitNOFILE= in systemd, --ulimit nofile= in Docker)";
            }
            return base;
        }

        private static String str(long v) {
            return v == ErrnoCalls.RLIM_INFINITY ? "unlimited" : Long.toUnsignedString(v);
        }
    }

    /** Raises the soft open-files limit to the hard one (nothing to do if they are equal). */
    public static Outcome raiseSoftToHard() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = ErrnoCalls.allocateCallState(arena);
            MemorySegment rl = arena.allocate(ErrnoCalls.RLIMIT);
            if (ErrnoCalls.getrlimit(cs, ErrnoCalls.RLIMIT_NOFILE, rl) != 0) {
                return new Outcome(-1, -1, -1, "getrlimit errno " + ErrnoCalls.errno(cs));
            }
            long soft = rl.get(ValueLayout.JAVA_LONG, 0);
            long hard = rl.get(ValueLayout.JAVA_LONG, 8);
            if (soft == hard) {
                return new Outcome(soft, soft, hard, null);
            }
            rl.set(ValueLayout.JAVA_LONG, 0, hard);
            if (ErrnoCalls.setrlimit(cs, ErrnoCalls.RLIMIT_NOFILE, rl) != 0) {
                return new Outcome(soft, soft, hard, "setrlimit errno " + ErrnoCalls.errno(cs));
            }
            if (ErrnoCalls.getrlimit(cs, ErrnoCalls.RLIMIT_NOFILE, rl) != 0) {
                return new Outcome(soft, hard, hard, null);
            }
            return new Outcome(soft, rl.get(ValueLayout.JAVA_LONG, 0), rl.get(ValueLayout.JAVA_LONG, 8), null);
        } catch (RuntimeException | LinkageError e) {
            return new Outcome(-1, -1, -1, String.valueOf(e));
        }
    }
}
