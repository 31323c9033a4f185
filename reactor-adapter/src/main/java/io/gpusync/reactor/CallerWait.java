package io.gpusync.reactor;

import io.gpusync.ErrorKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncWaiter;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.util.context.Context;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.LockSupport;

/**
 * One engine wait for a caller outside Reactor ({@link SyncEngine#block}, {@link SyncEngine#future}): the
 * subscriber of the wait, where its start runs, and its cancel.
 *
 * <p><b>Where the wait starts.</b> On a platform thread, in place, as a subscription to the {@code Mono} would.
 * On a virtual thread, on the engine's hand-off threads (its event loops): the first probe, a callback's
 * registration and every other native call of the start then run there, never on the virtual thread's carrier.
 *
 * <p><b>Cancel.</b> {@link #cancel()} frees the wait in place if it has started (the engine's termination releases
 * its registration before returning); a start still queued is abandoned and never touches the waiter; a start
 * running on an engine thread cancels the subscription as it arrives, and {@link #awaitFreed()} waits for that.
 */
final class CallerWait implements CoreSubscriber<Void>, Runnable {
    /** Receives the outcome once: {@code null} for a completion, else the error. */
    interface Outcome {
        void settled(Throwable error);
    }

    private static final VarHandle STATE;
    private static final VarHandle SUBSCRIPTION;
    /** {@link #subscription} once cancelled: a subscription that arrives later is cancelled at once. */
    private static final Subscription CANCELLED = new Subscription() {
        @Override
        public void request(long n) {
        }

        @Override
        public void cancel() {
        }
    };

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATE = l.findVarHandle(CallerWait.class, "state", int.class);
            SUBSCRIPTION = l.findVarHandle(CallerWait.class, "subscription", Subscription.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final int NEW = 0;
    private static final int STARTING = 1;
    /** The engine's {@code subscribe} has returned: nothing of the start is left to run. */
    private static final int STARTED = 2;
    /** Cancelled before its start ran: it never will. */
    private static final int ABANDONED = 3;

    private final SyncEngine engine;
    private final SyncWaiter waiter;
    private final Duration timeout;
    private final Outcome outcome;
    /** The thread to wake when a start that raced a cancel is over, or {@code null}. */
    private final Thread canceller;
    @SuppressWarnings("unused") // through STATE
    private volatile int state;
    @SuppressWarnings("unused") // through SUBSCRIPTION
    private volatile Subscription subscription;
    /** The caller's observation, taken on its thread: a wait started on a loop stays its child. */
    private final Context callerContext;

    CallerWait(SyncEngine engine, SyncWaiter waiter, Duration timeout, Outcome outcome, Thread canceller) {
        this.engine = engine;
        this.waiter = waiter;
        this.timeout = timeout;
        this.outcome = outcome;
        this.canceller = canceller;
        this.callerContext = engine.callerContext();
    }

    @Override
    public Context currentContext() {
        return callerContext;
    }

    SyncWaiter waiter() {
        return waiter;
    }

    /** Starts the wait: in place on a platform thread, on {@code handoff} on a virtual one. Never blocks. */
    void start(Executor handoff) {
        if (!Thread.currentThread().isVirtual()) {
            run();
            return;
        }
        try {
            handoff.execute(this);
        } catch (RejectedExecutionException loopsGone) { // the engine is disposed: its loops take no more work
            if (STATE.compareAndSet(this, NEW, ABANDONED)) {
                outcome.settled(new SyncCancelledException("engine " + engine.name() + " is disposed"));
            }
        }
    }

    /** The start: the engine's subscription, unless the wait was cancelled first. */
    @Override
    public void run() {
        if (!STATE.compareAndSet(this, NEW, STARTING)) {
            return; // abandoned
        }
        try {
            engine.subscribe(waiter, timeout, this);
        } catch (Throwable e) {
            outcome.settled(e);
        } finally {
            state = STARTED;
            if (subscription == CANCELLED && canceller != null) {
                LockSupport.unpark(canceller); // it may be waiting for this start to be over
            }
        }
    }

    @Override
    public void onSubscribe(Subscription s) {
        if (!SUBSCRIPTION.compareAndSet(this, null, s)) {
            s.cancel(); // cancelled while its start was on its way
        }
    }

    @Override
    public void onNext(Void v) {
    }

    @Override
    public void onError(Throwable t) {
        outcome.settled(t);
    }

    @Override
    public void onComplete() {
        outcome.settled(null);
    }

    /**
     * Cancels the wait, freeing it in place if it has started (never blocks).
     *
     * @return whether it is free now; if not, its start is running on an engine thread and frees it there
     */
    boolean cancel() {
        Subscription s = (Subscription) SUBSCRIPTION.getAndSet(this, CANCELLED);
        if (s != null && s != CANCELLED) {
            s.cancel();
        }
        return STATE.compareAndSet(this, NEW, ABANDONED) || isFree();
    }

    private boolean isFree() {
        int st = state;
        return st == STARTED || st == ABANDONED;
    }

    /**
     * After {@link #cancel()}, on the thread given as {@code canceller}: parks until a start that was running has
     * returned (microseconds: a start never blocks). The interrupt flag is cleared meanwhile and set again after.
     */
    void awaitFreed() {
        boolean interrupted = Thread.interrupted();
        while (!isFree()) {
            LockSupport.park(this);
            interrupted |= Thread.interrupted();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@code error} as an unchecked exception: itself if it is one, else wrapped in a {@link SyncException}. */
    static RuntimeException unchecked(Throwable error) {
        if (error instanceof RuntimeException r) {
            return r;
        }
        if (error instanceof Error e) {
            throw e;
        }
        return new SyncException(ErrorKind.FATAL, null, "the wait failed: " + error, error);
    }
}
