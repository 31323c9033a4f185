package io.gpusync.reactor;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.SignalListener;
import io.gpusync.spi.Timeouts;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;

/**
 * One subscription to an engine wait: the {@link Subscription} handed to the subscriber, the target of the
 * timeout timer, and the {@link SignalListener} of callback waits. It terminates exactly once — signalled,
 * failed, timed out, cancelled or disposed — and the termination frees the strategy's registration and the
 * timer before the subscriber hears of it.
 */
final class PendingWait implements Subscription, Runnable, SignalListener {
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(PendingWait.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final int ACTIVE = 0;
    private static final int DONE = 1;

    final SyncEngine engine;
    final SyncWaiter waiter;
    final Duration timeout;
    final CoreSubscriber<? super Void> actual;
    final long startNanos;
    /** Set before the wait is started; a strategy may hand the wait to another one before it registers. */
    volatile WaitStrategy strategy;
    /** Spin-then-callback: after this long on the pollers, {@link #handOverTo} takes the wait over. */
    long handOverAfterNanos;
    WaitStrategy handOverTo;
    /** The strategy's registration (a callback registration, an fd watch, a wait-set server). */
    volatile Object registration;
    private volatile Disposable timer;
    @SuppressWarnings("unused") // through STATE
    private volatile int state;

    PendingWait(SyncEngine engine, SyncWaiter waiter, Duration timeout, CoreSubscriber<? super Void> actual,
                WaitStrategy strategy) {
        this.engine = engine;
        this.waiter = waiter;
        this.timeout = timeout;
        this.actual = actual;
        this.strategy = strategy;
        this.startNanos = System.nanoTime();
    }

    boolean isDone() {
        return state != ACTIVE;
    }

    WaitPath path() {
        return strategy.path();
    }

    void setTimer(Disposable t) {
        timer = t;
        if (isDone()) {
            t.dispose();
        }
    }

    private boolean terminate() {
        if (!STATE.compareAndSet(this, ACTIVE, DONE)) {
            return false;
        }
        Disposable t = timer;
        if (t != null) {
            t.dispose();
        }
        engine.forget(this);
        strategy.release(this);
        return true;
    }

    /** The point was signalled. */
    @Override
    public void signalled() {
        if (terminate()) {
            engine.deliverComplete(this);
        }
    }

    /** The waiter failed (its error propagates unchanged). */
    void failed(Throwable error) {
        if (terminate()) {
            engine.deliverError(this, error);
        }
    }

    @Override
    public void failed(SyncException error) {
        failed((Throwable) error);
    }

    /** The timeout timer fired. */
    @Override
    public void run() {
        if (terminate()) {
            engine.deliverError(this, new SyncTimeoutException(waiter.backend(),
                    waiter + " not signalled within " + Timeouts.describe(timeout)));
        }
    }

    /** The engine is being disposed. */
    void engineDisposed() {
        if (terminate()) {
            engine.deliverError(this, new SyncCancelledException("the engine was disposed while waiting on " + waiter));
        }
    }

    @Override
    public void request(long n) {
        // a Mono<Void> emits no value: demand changes nothing
    }

    @Override
    public void cancel() {
        if (terminate()) {
            engine.metrics.cancelled(path());
        }
    }

    @Override
    public String toString() {
        return "PendingWait[" + waiter + ", " + path() + (isDone() ? ", done" : "") + "]";
    }
}
