package io.gpusync.reactor;

import io.gpusync.SyncTimeoutException;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

/**
 * The engine's side of the termination protocol ({@link PendingWait}): forgets the wait, counts it, and signals
 * its subscriber in place, or on {@code deliverOn}; if that scheduler refuses the task, in place (the outcome is
 * never lost). Never throws.
 */
final class OutcomeDelivery implements OutcomeSink {
    private static final System.Logger LOG = System.getLogger(SyncEngine.class.getName());

    private final PendingWaits pending;
    private final EngineMeters meters;
    private final Scheduler deliverOn; // null: in place

    OutcomeDelivery(PendingWaits pending, EngineMeters meters, Scheduler deliverOn) {
        this.pending = pending;
        this.meters = meters;
        this.deliverOn = deliverOn;
    }

    @Override
    public void terminated(PendingWait wait, Throwable outcome) {
        pending.remove(wait);
        CoreSubscriber<? super Void> actual = wait.takeSubscriber();
        if (outcome != null && outcome != PendingWait.CANCELLED && !(outcome instanceof SyncTimeoutException)) {
            meters.failedWith(outcome);
        }
        EngineMetrics metrics = meters.sink();
        if (metrics == EngineMetrics.NONE && deliverOn == null) {
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
                metrics.cancelled(path);
                return;
            } else if (outcome == null) {
                metrics.completed(path, seen - wait.startNanos);
            } else if (outcome instanceof SyncTimeoutException) {
                metrics.timedOut(path);
            } else {
                metrics.failed(path, outcome);
            }
        } catch (Throwable e) {
            LOG.log(System.Logger.Level.WARNING, "engine metrics failed", e);
        }
        Runnable delivery = () -> {
            if (outcome == null) {
                try {
                    metrics.delivered(path, System.nanoTime() - seen);
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
