package io.gpusync.reactor.soak;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * The soak's leak check on resident memory. Drivers grow RSS while they warm up, and a leak keeps growing it after
 * that. So growth is measured from the later of 40 % of the run and the point where the drivers' RSS settles, to
 * the end. A run that leaves less than 40 % of its length after that point does not judge RSS at all, and says so,
 * rather than count the drivers' warm-up as a leak.
 *
 * @param runSeconds          the run's length
 * @param settlesAfterSeconds how long the drivers' own RSS keeps growing after the run starts (0: at once)
 */
record RssWindow(long runSeconds, long settlesAfterSeconds) {
    /** The most RSS may grow inside the window. */
    static final long BOUND_MIB = 48;

    /** Seconds into the run of the reading that growth is measured from; empty when the run does not judge RSS. */
    OptionalLong fromSeconds() {
        long from = Math.max(runSeconds * 2 / 5, settlesAfterSeconds);
        return from <= runSeconds * 3 / 5 ? OptionalLong.of(from) : OptionalLong.empty();
    }

    /** RSS growth, in whole MiB, between two readings. */
    static long growthMiB(long fromKiB, long endKiB) {
        return (endKiB - fromKiB) / 1024;
    }

    /** Why the run fails on RSS: growth past {@link #BOUND_MIB} from the window's start to the end. */
    Optional<String> failure(long fromKiB, long endKiB) {
        long growthMiB = growthMiB(fromKiB, endKiB);
        return growthMiB > BOUND_MIB
                ? Optional.of("RSS grew by " + growthMiB + " MiB after " + fromSeconds().orElseThrow() + " s")
                : Optional.empty();
    }

    /** What the verdict line says when the run does not judge RSS. */
    String notJudged() {
        return "RSS not judged: the drivers' RSS settles " + settlesAfterSeconds + " s into the run, too late in a "
                + runSeconds + "-s run";
    }
}
