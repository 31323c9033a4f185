package io.gpusync.reactor;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncTimeoutException;
import io.micrometer.observation.Observation;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.util.context.Context;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The subscriber of one observed wait: passes every signal through, and stops the wait's started
 * {@link Observation} exactly once — with the path the wait took and its outcome — just before the outcome
 * reaches the subscriber (so the span ends when the engine delivers the wake), or when the subscriber cancels.
 *
 * <p><b>Threading.</b> {@code onComplete}/{@code onError} arrive on the thread that terminated the wait (see
 * {@link WaitPath}), {@code cancel} on any thread; a CAS decides which one stops the observation. A handler that
 * throws from {@code onStop} is logged and never keeps the outcome from the subscriber. No scope is opened: the
 * subscriber's code after the wake is not part of the wait.
 */
final class ObservedWait implements CoreSubscriber<Void>, Subscription, Scannable {
    private static final System.Logger LOG = System.getLogger(SyncEngine.class.getName());
    private static final VarHandle STOPPED;

    static {
        try {
            STOPPED = MethodHandles.lookup().findVarHandle(ObservedWait.class, "stopped", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final CoreSubscriber<? super Void> actual;
    private final Observation observation;
    private final GpuSyncWaitContext context;
    private Subscription upstream;
    @SuppressWarnings("unused") // through STOPPED
    private volatile boolean stopped;

    ObservedWait(CoreSubscriber<? super Void> actual, Observation observation, GpuSyncWaitContext context) {
        this.actual = actual;
        this.observation = observation;
        this.context = context;
    }

    @Override
    public void onSubscribe(Subscription s) {
        upstream = s;
        actual.onSubscribe(this);
    }

    @Override
    public void onNext(Void unused) {
        // a Mono<Void> emits no value
    }

    @Override
    public void onComplete() {
        stop(GpuSyncWaitContext.Outcome.COMPLETED, null);
        actual.onComplete();
    }

    @Override
    public void onError(Throwable t) {
        if (t instanceof SyncTimeoutException) {
            stop(GpuSyncWaitContext.Outcome.TIMEOUT, t);
        } else if (t instanceof SyncCancelledException) { // the engine was disposed
            stop(GpuSyncWaitContext.Outcome.CANCELLED, null);
        } else {
            stop(GpuSyncWaitContext.Outcome.FAILED, t);
        }
        actual.onError(t);
    }

    @Override
    public void request(long n) {
        upstream.request(n);
    }

    @Override
    public void cancel() {
        upstream.cancel(); // frees the wait first: the observation covers the release
        stop(GpuSyncWaitContext.Outcome.CANCELLED, null);
    }

    @Override
    public Context currentContext() {
        return actual.currentContext();
    }

    private void stop(GpuSyncWaitContext.Outcome outcome, Throwable error) {
        if (!STOPPED.compareAndSet(this, false, true)) {
            return;
        }
        try {
            // the engine's waits are PendingWaits; one answered at subscription had an empty subscription
            context.terminated(upstream instanceof PendingWait w ? w.path() : WaitPath.IMMEDIATE, outcome);
            if (error != null) {
                observation.error(error);
            }
            observation.stop();
        } catch (Throwable e) {
            LOG.log(System.Logger.Level.WARNING, "stopping the observation of a wait failed", e);
        }
    }

    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.ACTUAL) {
            return actual;
        }
        if (key == Attr.PARENT) {
            return upstream;
        }
        if (key == Attr.TERMINATED || key == Attr.CANCELLED) {
            return stopped && context.outcome() != null
                    && (key == Attr.CANCELLED) == (context.outcome() == GpuSyncWaitContext.Outcome.CANCELLED);
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    @Override
    public String stepName() {
        return "gpusync.observation";
    }
}
