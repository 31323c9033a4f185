package io.gpusync.reactor;

import io.gpusync.SyncWaiter;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;

import java.time.Duration;

/**
 * {@link SyncEngine#await}: the cold {@code Mono<Void>} of one engine wait; each subscription starts a new wait
 * (a {@link PendingWait}, unless the first probe answers). Scannable as the source step {@code gpusync.await}.
 */
final class WaitMono extends Mono<Void> implements Scannable {
    private final SyncEngine engine;
    private final SyncWaiter waiter;
    private final Duration timeout;

    WaitMono(SyncEngine engine, SyncWaiter waiter, Duration timeout) {
        this.engine = engine;
        this.waiter = waiter;
        this.timeout = timeout;
    }

    /** The wait, passed through Reactor's assembly hooks as reactor-core's operators are. */
    static Mono<Void> of(SyncEngine engine, SyncWaiter waiter, Duration timeout) {
        return onAssembly(new WaitMono(engine, waiter, timeout));
    }

    @Override
    public void subscribe(CoreSubscriber<? super Void> actual) {
        engine.subscribe(waiter, timeout, actual);
    }

    @Override
    public Object scanUnsafe(Attr key) {
        return key == Attr.RUN_STYLE ? Attr.RunStyle.ASYNC : null;
    }

    @Override
    public String stepName() {
        return "gpusync.await";
    }
}
