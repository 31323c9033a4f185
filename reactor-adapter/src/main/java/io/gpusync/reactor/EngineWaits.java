package io.gpusync.reactor;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.CheapProbe;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

import java.time.Duration;

/**
 * Starts one engine's waits and delivers their outcomes: the first probe at subscription, the {@link PendingWait}
 * on its strategy and its timeout, and — as the wait's {@link OutcomeSink} — forgetting, counting and signalling it
 * when it terminates (see {@link PendingWait} for the termination protocol, {@link SyncEngine} for the semantics).
 *
 * <p><b>Threading.</b> Thread-safe. {@link #subscribe} runs on the subscribing thread and never blocks (a blocking
 * waiter whose probe is not cheap is first probed on the waiter pool). Outcomes are signalled in place on the thread
 * that terminated the wait, or on the builder's {@code deliverOn} scheduler — in place if that scheduler refuses.
 */
final class EngineWaits implements OutcomeSink {
    private static final System.Logger LOG = System.getLogger(SyncEngine.class.getName());

    private final String engine;
    private final WaitStrategies strategies;
    private final PendingWaits pending;
    private final EngineTimeouts timeouts;
    private final BoundMetrics metrics;
    private final DeviceLosses losses;
    private final EngineDisposal disposal;
    /** Where outcomes are signalled, or {@code null}: in place. */
    private final Scheduler deliverOn;

    EngineWaits(String engine, WaitStrategies strategies, PendingWaits pending, EngineTimeouts timeouts,
                BoundMetrics metrics, DeviceLosses losses, EngineDisposal disposal, Scheduler deliverOn) {
        this.engine = engine;
        this.strategies = strategies;
        this.pending = pending;
        this.timeouts = timeouts;
        this.metrics = metrics;
        this.losses = losses;
        this.disposal = disposal;
        this.deliverOn = deliverOn;
    }

    /** One wait on {@code waiter} for {@code actual} (every operator of the engine starts its waits here). */
    void subscribe(SyncWaiter waiter, Duration timeout, CoreSubscriber<? super Void> actual) {
        if (disposal.isDisposed()) {
            actual.onSubscribe(Operators.emptySubscription());
            signal(actual, new SyncCancelledException("engine " + engine + " is disposed"));
            return;
        }
        WaitStrategy strategy = strategies.of(waiter);
        // one probe first: an already-signalled point costs no registration at all. Not here for a blocking
        // waiter whose probe is not declared cheap (an EGL/GL sync binds a context to probe): the subscribing
        // thread may be an event loop or a Reactor parallel thread; the waiter pool makes the first probe.
        if (probesAtSubscription(waiter, strategy) && answeredByProbe(waiter, timeout, actual)) {
            return;
        }
        PendingWait wait = new PendingWait(this, waiter, timeout, actual, strategy);
        try {
            actual.onSubscribe(wait);
        } catch (Throwable e) {
            wait.cancel(); // free it: the subscriber never got hold of the wait
            throw e;
        }
        // listed only once the subscriber has its subscription: a dispose that ends the listed waits from another
        // thread must not signal a subscriber still in (or before) onSubscribe (Reactive Streams §1.3, §1.9)
        pending.add(wait);
        if (wait.isDone()) { // cancelled (or failed by a bad request) in onSubscribe: it may have missed the list
            pending.remove(wait);
            return;
        }
        if (disposal.isDisposed()) { // a dispose that took its snapshot before the wait was listed
            wait.engineDisposed();
            return;
        }
        try {
            strategy.start(wait); // first, so that probing begins before the timer's bookkeeping
        } catch (Throwable e) {
            wait.failed(e);
            return;
        }
        timeouts.start(wait, timeout);
    }

    /** The first probe: {@code true} if it answered (the subscriber has been signalled), so no wait is needed. */
    private boolean answeredByProbe(SyncWaiter waiter, Duration timeout, CoreSubscriber<? super Void> actual) {
        boolean signalled;
        Throwable error = null;
        try {
            signalled = waiter.isSignaled();
            if (!signalled && timeout.isZero()) {
                error = new SyncTimeoutException(waiter.backend(), waiter + " not signalled (probe)");
            }
        } catch (Throwable e) {
            signalled = false;
            error = e;
        }
        if (!signalled && error == null) {
            return false;
        }
        EngineMetrics m = metrics.current();
        if (signalled) {
            m.completed(WaitPath.IMMEDIATE, 0);
        } else if (error instanceof SyncTimeoutException) {
            m.timedOut(WaitPath.IMMEDIATE);
        } else {
            losses.record(error);
            m.failed(WaitPath.IMMEDIATE, error);
        }
        actual.onSubscribe(Operators.emptySubscription());
        signal(actual, error);
        return true;
    }

    private static boolean probesAtSubscription(SyncWaiter waiter, WaitStrategy strategy) {
        return strategy.path() != WaitPath.BLOCKING || waiter instanceof CheapProbe;
    }

    /**
     * The engine's side of the termination protocol: forget the wait, count it, and signal its subscriber — in
     * place, or on {@code deliverOn}; if that scheduler refuses the task, in place (the outcome is never lost).
     * Never throws.
     */
    @Override
    public void terminated(PendingWait wait, Throwable outcome) {
        pending.remove(wait);
        CoreSubscriber<? super Void> actual = wait.takeSubscriber();
        if (outcome != null && outcome != PendingWait.CANCELLED && !(outcome instanceof SyncTimeoutException)) {
            losses.record(outcome);
        }
        EngineMetrics m = metrics.current();
        if (m == EngineMetrics.NONE && deliverOn == null) {
            // the burst path: no clock read, no task object — signal in place
            if (outcome != PendingWait.CANCELLED) {
                signal(actual, outcome);
            }
            return;
        }
        long seen = System.nanoTime();
        WaitPath path = wait.path();
        try {
            if (outcome == PendingWait.CANCELLED) {
                m.cancelled(path);
                return;
            } else if (outcome == null) {
                m.completed(path, seen - wait.startNanos);
            } else if (outcome instanceof SyncTimeoutException) {
                m.timedOut(path);
            } else {
                m.failed(path, outcome);
            }
        } catch (Throwable e) {
            LOG.log(System.Logger.Level.WARNING, "engine metrics failed", e);
        }
        Runnable delivery = () -> {
            if (outcome == null) {
                try {
                    m.delivered(path, System.nanoTime() - seen);
                } catch (Throwable e) {
                    LOG.log(System.Logger.Level.WARNING, "engine metrics failed", e);
                }
            }
            signal(actual, outcome);
        };
        if (deliverOn == null) {
            delivery.run();
            return;
        }
        try {
            deliverOn.schedule(delivery);
        } catch (Throwable rejected) { // a bounded or disposed scheduler: deliver here rather than never
            delivery.run();
        }
    }

    /**
     * Signals a terminal outcome ({@code null}: complete). A subscriber that throws from {@code onComplete}
     * or {@code onError} has its exception sent where reactor-core sends it ({@link Operators#onErrorDropped})
     * — never into the engine's thread, an event loop, a driver's thread or the thread that signalled.
     */
    static void signal(CoreSubscriber<? super Void> actual, Throwable outcome) {
        try {
            if (outcome == null) {
                actual.onComplete();
            } else {
                actual.onError(outcome);
            }
        } catch (Throwable thrown) {
            try {
                Operators.onErrorDropped(thrown, actual.currentContext());
            } catch (Throwable hookThrew) {
                hookThrew.addSuppressed(thrown);
                LOG.log(System.Logger.Level.ERROR, "a subscriber's onComplete/onError threw, and so did the"
                        + " onErrorDropped hook", hookThrew);
            }
        }
    }
}
