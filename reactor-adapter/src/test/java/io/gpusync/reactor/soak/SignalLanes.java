package io.gpusync.reactor.soak;

import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The soak's signalling threads, a lane per ticket source: two actors and two Reactor parallel workers
 * (non-blocking threads) each. A driver call that never returns holds up only its own source's signals, as a
 * housekeeping lane holds up only its own backend's releases. Lanes are made on first use; thread-safe.
 */
final class SignalLanes implements AutoCloseable {
    /** The threads an action may run on. */
    enum Path { INLINE, ACTOR, ACTOR_LATER, PARALLEL_LATER }

    private record Lane(ScheduledExecutorService actors, Scheduler parallel) {
        Lane(String source) {
            this(Executors.newScheduledThreadPool(2, Thread.ofPlatform().name("soak-" + source + "-actor-", 0)
                    .daemon().factory()), Schedulers.newParallel("soak-" + source + "-parallel", 2, true));
        }
    }

    private final Map<String, Lane> lanes = new ConcurrentHashMap<>();

    /** Runs {@code action} on {@code path} of {@code source}'s lane, after {@code delayMicros} where it waits. */
    void run(String source, Path path, long delayMicros, Runnable action) {
        switch (path) {
            case INLINE -> action.run();
            case ACTOR -> lane(source).actors().execute(action);
            case ACTOR_LATER -> lane(source).actors().schedule(action, delayMicros, TimeUnit.MICROSECONDS);
            case PARALLEL_LATER -> lane(source).parallel().schedule(action, delayMicros, TimeUnit.MICROSECONDS);
        }
    }

    private Lane lane(String source) {
        return lanes.computeIfAbsent(source, Lane::new);
    }

    @Override
    public void close() {
        lanes.values().forEach(l -> {
            l.actors().shutdownNow();
            l.parallel().dispose();
        });
    }
}
