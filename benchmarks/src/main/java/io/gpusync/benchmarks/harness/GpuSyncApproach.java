package io.gpusync.benchmarks.harness;

import io.gpusync.SyncWaiter;
import io.gpusync.reactor.SyncEngine;
import reactor.core.publisher.Mono;

import java.time.Duration;

/** gpusync: {@code engine.await(waiter, timeout)}; freed = {@code engine.pendingWaits()} dropped. */
final class GpuSyncApproach implements Approach {
    private final String key;
    private final String label;
    final SyncEngine engine;

    GpuSyncApproach(String key, String label, SyncEngine engine) {
        this.key = key;
        this.label = label;
        this.engine = engine;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public String label() {
        return label;
    }

    @Override
    public Mono<Void> await(SyncWaiter waiter, Duration timeout) {
        return engine.await(waiter, timeout);
    }

    @Override
    public int threads() {
        return Approach.threadsNamed("gpusync-" + engine.name() + "-");
    }

    @Override
    public long holding() {
        return engine.pendingWaits();
    }

    @Override
    public void close() {
        engine.dispose();
    }
}
