package io.gpusync.reactor;

import io.gpusync.SyncWaiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * One engine's chain of {@link WaitStrategy}s, cheapest first — spin-then-callback, callback, epoll (when the loops
 * have an fd watcher), wait set, blocking, probe — and the choice of a waiter's strategy: the first that accepts
 * it, remembered per waiter class. Thread-safe; the choice never blocks.
 */
final class WaitStrategies {
    private final List<WaitStrategy> chain = new ArrayList<>();
    private final ConcurrentHashMap<Class<?>, WaitStrategy> byClass = new ConcurrentHashMap<>();

    /**
     * @param idle the pollers' fixed idle strategy, or {@code null}: adaptive probing ({@link AdaptiveProbePass})
     */
    WaitStrategies(EngineLoops loops, EngineThreads threads, int pollerThreads, Supplier<IdleStrategy> idle,
                   Duration spinBudget, Duration blockingSlice, int waiterThreads) {
        SpinThenPoll probe = new SpinThenPoll(pollerThreads, idle, spinBudget.toNanos(), threads.role("poller"),
                threads.role("probe-guard"));
        CallbackStrategy callbacks = new CallbackStrategy(loops);
        chain.add(probe.spinThenCallback(spinBudget.toNanos(), callbacks));
        chain.add(callbacks);
        WaitStrategy epoll = loops.fdWatcher();
        if (epoll != null) {
            chain.add(epoll);
        }
        chain.add(new WaitSetStrategy(blockingSlice, threads.role("waitset")));
        chain.add(new WaiterPool(waiterThreads, blockingSlice, Duration.ofSeconds(30), threads, probe));
        chain.add(probe);
    }

    /** The strategy of {@code waiter}: the first in the chain that accepts it (the probe path accepts all). */
    WaitStrategy of(SyncWaiter waiter) {
        return byClass.computeIfAbsent(waiter.getClass(), c -> chain.stream()
                .filter(s -> s.accepts(waiter)).findFirst().orElseThrow());
    }

    /** Every strategy, in the chain's order (for disposal). */
    List<WaitStrategy> all() {
        return chain;
    }
}
