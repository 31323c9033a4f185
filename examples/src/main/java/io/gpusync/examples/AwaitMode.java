package io.gpusync.examples;

import java.util.Locale;

/**
 * How the demo's {@code GET /compute} awaits a request's GPU work: through gpusync, or the two ways Java services do
 * without it. The two baselines are there to be compared against, not to be copied.
 */
public enum AwaitMode {
    /** gpusync's engine: a {@code Mono} completed from the device's sync point, no thread per request. */
    GPUSYNC("gpusync"),
    /**
     * Baseline: {@code Mono.fromRunnable(blocking wait).subscribeOn(Schedulers.boundedElastic())} — one elastic thread
     * blocked per request (CUDA: in {@code cuEventSynchronize}), at most ten per core, the rest queued.
     */
    ELASTIC_BLOCKING("elastic-blocking"),
    /**
     * Baseline: one virtual thread per request blocked in the same wait. A native call pins the virtual thread's
     * carrier for its whole length, so at most one such wait per carrier (one per core) runs at a time.
     */
    VIRTUAL_THREADS("virtual-threads");

    private final String id;

    AwaitMode(String id) {
        this.id = id;
    }

    /** The name on the command line and in {@code ?await=}. */
    public String id() {
        return id;
    }

    /**
     * Whether a platform thread of this name exists to await GPU work in this mode: gpusync's own threads (its
     * pollers, waiter pool, CUDA sweeper and armer; not the server's loops, which every mode has), the elastic
     * scheduler's workers, or the virtual threads' carriers.
     */
    public boolean awaitsOn(String threadName) {
        return switch (this) {
            case GPUSYNC -> threadName.startsWith("gpusync-") && !threadName.startsWith("gpusync-demo");
            case ELASTIC_BLOCKING -> threadName.startsWith("boundedElastic-");
            case VIRTUAL_THREADS -> threadName.startsWith("ForkJoinPool-"); // the default scheduler's carriers
        };
    }

    /** The mode called {@code name} ({@link #id()}, case-insensitive). */
    public static AwaitMode named(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (AwaitMode m : values()) {
            if (m.id.equals(n)) {
                return m;
            }
        }
        throw new IllegalArgumentException("await must be gpusync, elastic-blocking or virtual-threads: '" + name + "'");
    }
}
