package io.gpusync.reactor;

import io.gpusync.SyncWaiter;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An engine's wait strategies, cheapest first, and the one each waiter class takes: the first that accepts it
 * (remembered per class). Thread-safe; never blocks.
 */
final class StrategyChain {
    private final List<WaitStrategy> strategies = new ArrayList<>();
    private final ConcurrentHashMap<Class<?>, WaitStrategy> byClass = new ConcurrentHashMap<>();

    StrategyChain(SyncEngineBuilder b, EngineLoops loops, EngineThreads threads) {
        long spin = b.spinBudget.toNanos();
        // no idle strategy given: the adaptive scheduler (per-source learned completion times, AdaptiveProbePass)
        SpinThenPoll probe = new SpinThenPoll(b.pollerThreads, b.idleStrategy, spin, threads.role("poller"));
        CallbackStrategy callbacks = new CallbackStrategy(loops);
        strategies.add(probe.spinThenCallback(spin, callbacks));
        strategies.add(callbacks);
        WaitStrategy epoll = loops.fdWatcher();
        if (epoll != null) {
            strategies.add(epoll);
        }
        strategies.add(new WaitSetStrategy(b.blockingSlice, threads.role("waitset")));
        strategies.add(new WaiterPool(b.waiterThreads, b.blockingSlice, java.time.Duration.ofSeconds(30),
                threads.role("waiter"), probe));
        strategies.add(probe);
    }

    WaitStrategy strategyFor(SyncWaiter waiter) {
        return byClass.computeIfAbsent(waiter.getClass(), c -> strategies.stream()
                .filter(s -> s.accepts(waiter)).findFirst().orElseThrow());
    }

    /** Every strategy, for disposal. */
    List<WaitStrategy> all() {
        return strategies;
    }
}
