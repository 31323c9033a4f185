package io.gpusync.reactor;

import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

/**
 * A bare subscriber whose {@code onComplete} and {@code onError} throw (reactor's own lambda subscribers
 * catch their consumers' exceptions, so only a bare one shows where an exception escapes to).
 */
final class ThrowingSubscriber implements CoreSubscriber<Void> {
    volatile boolean terminated;

    @Override
    public void onSubscribe(Subscription s) {
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(Void v) {
    }

    @Override
    public void onError(Throwable t) {
        terminated = true;
        throw new IllegalStateException("subscriber threw from onError", t);
    }

    @Override
    public void onComplete() {
        terminated = true;
        throw new IllegalStateException("subscriber threw from onComplete");
    }
}
