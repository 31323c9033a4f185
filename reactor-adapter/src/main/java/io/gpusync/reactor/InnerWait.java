package io.gpusync.reactor;

import io.gpusync.SyncCancelledException;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * The subscriber of one engine wait inside a gpusync operator — a member of {@code awaitAll}/{@code awaitAny}
 * ({@link WaitGroupMono}) or {@code awaitFirst} ({@link MonoAwaitFirst}), an item of {@code awaitEach}
 * ({@link FluxAwaitEach}): it holds the wait's subscription so that the operator can cancel the wait at any time,
 * and hands the wait's outcome to the operator ({@link #signalled()}, {@link #failed}).
 *
 * <p><b>Threading.</b> The engine calls {@code onSubscribe} and then one of {@code onComplete}/{@code onError}, each
 * at most once, from any thread. {@link #cancel()} is thread-safe, idempotent and never blocks; cancelling before
 * the wait has called {@code onSubscribe} cancels the wait as soon as it arrives. Scannable like reactor-core's
 * inner subscribers: {@code PARENT} is the wait, {@code ACTUAL} the operator's coordinator.
 */
abstract class InnerWait implements CoreSubscriber<Void>, Scannable {
    private static final AtomicReferenceFieldUpdater<InnerWait, Subscription> S =
            AtomicReferenceFieldUpdater.newUpdater(InnerWait.class, Subscription.class, "s");

    private volatile Subscription s;
    private volatile boolean done;

    /** The wait's point was signalled. */
    abstract void signalled();

    /** The wait failed (or timed out, or its engine was disposed). */
    abstract void failed(Throwable error);

    /** The operator's coordinator, to which this reports ({@code Attr.ACTUAL}). */
    abstract Object coordinator();

    @Override
    public abstract Context currentContext();

    @Override
    public final void onSubscribe(Subscription subscription) {
        if (Operators.setOnce(S, this, subscription)) { // a cancelled inner cancels the wait at once instead
            subscription.request(Long.MAX_VALUE); // a Mono<Void>: demand changes nothing, asked for all the same
        }
    }

    @Override
    public final void onNext(Void v) {
        // Mono<Void>: no values
    }

    @Override
    public final void onComplete() {
        done = true;
        signalled();
    }

    @Override
    public final void onError(Throwable t) {
        done = true;
        failed(t);
    }

    /** Cancels (frees) the wait; see the class comment. */
    final void cancel() {
        Operators.terminate(S, this);
    }

    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.PARENT) {
            return s;
        }
        if (key == Attr.ACTUAL) {
            return coordinator();
        }
        if (key == Attr.CANCELLED) {
            return s == Operators.cancelledSubscription() && !done;
        }
        if (key == Attr.TERMINATED) {
            return done;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.SYNC; // reports on the thread that signals the wait
        }
        return null;
    }

    /**
     * An error of a wait that reached its operator after the operator had ended (failed, or been cancelled): a
     * {@link SyncCancelledException} — the wait's cancellation by that very end, or the engine's dispose that raced
     * with it — tells nothing the subscriber has not been told and is discarded; any other error goes to
     * {@link Operators#onErrorDropped}, as in reactor-core.
     */
    static void lateError(Throwable error, Context context) {
        if (!(error instanceof SyncCancelledException)) {
            Operators.onErrorDropped(error, context);
        }
    }
}
