package io.gpusync.reactor;

import io.gpusync.SyncWaiter;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

import java.time.Duration;

/** The cold {@code Mono<Void>} of one engine wait: each subscription starts a new wait. */
final class WaitMono extends Mono<Void> {
    private final SyncEngine engine;
    private final SyncWaiter waiter;
    private final Duration timeout;

    WaitMono(SyncEngine engine, SyncWaiter waiter, Duration timeout) {
        this.engine = engine;
        this.waiter = waiter;
        this.timeout = timeout;
    }

    @Override
    public void subscribe(CoreSubscriber<? super Void> actual) {
        engine.subscribe(waiter, timeout, actual);
    }
}
