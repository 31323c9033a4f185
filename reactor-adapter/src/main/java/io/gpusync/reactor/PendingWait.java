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
import reactor.core.Scannable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;

/**
 * One subscription to an engine wait: the {@link Subscription} handed to the subscriber, the target of the
 * timeout timer, and the {@link SignalListener} of callback waits.
 *
 * <p><b>The termination protocol.</b> Whoever terminates the wait — the point signalled, the waiter failed,
 * the timer, a cancel, the engine's dispose — claims the one termination with a CAS; every later attempt does
 * nothing. The winner then, in this order: disposes the timer; releases the strategy's {@link Registration}
 * (native deregistration first, so that a subscriber may close the primitive when it hears of the outcome);
 * and hands the outcome to the {@link OutcomeSink} exactly once. Nothing thrown on the way — by a release,
 * the timer, the sink — loses the outcome: each step is guarded, and a failure of a release is reported
 * (never rethrown into the thread that terminated the wait: a driver thread, an event loop, a signaller).
 *
 * <p>Scannable like a reactor-core subscription: {@code ACTUAL} is the subscriber until the wait terminates,
 * {@code CANCELLED} and {@code TERMINATED} tell how it ended.
 */
final class PendingWait extends PendingWaits.Listed implements Subscription, Runnable, SignalListener, Scannable {
    /** The outcome of a cancelled wait: nothing is signalled. */
    static final Throwable CANCELLED = new Throwable("cancelled by the subscriber", null, false, false) {
    }; // a marker that records nothing (no stack, no suppressed): never delivered

    private static final System.Logger LOG = System.getLogger(PendingWait.class.getName());
    private static final VarHandle STATE;
    private static final VarHandle HELD;
    private static final VarHandle REPORTED;
    /** {@link #held} once the wait has terminated: a registration attached later is released at once. */
    private static final Registration RELEASED = () -> { };

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATE = l.findVarHandle(PendingWait.class, "state", int.class);
            HELD = l.findVarHandle(PendingWait.class, "held", Registration.class);
            REPORTED = l.findVarHandle(PendingWait.class, "reported", boolean.class);
            // loaded now, not at the first termination: a process out of file descriptors cannot load a class
            // from a directory or jar, and a termination must not fail for that (eventfd waits at the fd limit)
            l.ensureInitialized(Registration.InPlace.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final int ACTIVE = 0;
    private static final int DONE = 1;
    /** Done by the subscriber's cancel. */
    private static final int CANCELLED_STATE = 2;

    final OutcomeSink sink;
    final SyncWaiter waiter;
    final Duration timeout;
    /**
     * The subscriber, until {@link #takeSubscriber()} drops it when the wait terminates: a terminated wait may
     * stay referenced for a while (by a {@link TimeoutQueue} until its deadline or compaction), and Reactive
     * Streams §3.13 wants the subscriber's reference dropped once it is cancelled.
     */
    private CoreSubscriber<? super Void> actual;
    final long startNanos;
    /** The strategy now serving the wait (for its path); a strategy may hand the wait to another one. */
    volatile WaitStrategy strategy;
    /** The pollers' state of this wait, once they have taken it ({@code null} until then; see {@link PollState}). */
    PollState polled;
    @SuppressWarnings("unused") // through HELD
    private volatile Registration held;
    private volatile Disposable timer;
    @SuppressWarnings("unused") // through STATE
    private volatile int state;
    @SuppressWarnings("unused") // through REPORTED
    private volatile boolean reported;

    PendingWait(OutcomeSink sink, SyncWaiter waiter, Duration timeout, CoreSubscriber<? super Void> actual,
                WaitStrategy strategy) {
        this.sink = sink;
        this.waiter = waiter;
        this.timeout = timeout;
        this.actual = actual;
        this.strategy = strategy;
        this.startNanos = System.nanoTime();
    }

    /** The subscriber, dropped from this wait; called once, by the engine when the wait has terminated. */
    CoreSubscriber<? super Void> takeSubscriber() {
        CoreSubscriber<? super Void> a = actual;
        actual = null;
        return a;
    }

    boolean isDone() {
        return state != ACTIVE;
    }

    WaitPath path() {
        return strategy.path();
    }

    /**
     * Hands this wait the strategy's registration (replacing an earlier one of a strategy that passed the wait
     * on). If the wait has already terminated, {@code r} is released at once, here.
     *
     * @return whether the registration is now held (otherwise it has been released)
     */
    boolean attach(Registration r) {
        while (true) {
            Registration current = held;
            if (current == RELEASED) {
                releaseQuietly(r);
                return false;
            }
            if (HELD.compareAndSet(this, current, r)) {
                return true;
            }
        }
    }

    void setTimer(Disposable t) {
        timer = t;
        if (isDone()) {
            t.dispose();
        }
    }

    /** The point was signalled. */
    @Override
    public void signalled() {
        PollState p = polled;
        CompletionTimes learns = p == null ? null : p.learnsAfterHandOver;
        if (learns == null) {
            terminate(null, true);
            return;
        }
        long age = System.nanoTime() - startNanos;
        if (terminate(null, true)) {
            learns.record(age);
        }
    }

    /** The waiter failed (its error propagates unchanged). */
    void failed(Throwable error) {
        terminate(error, true);
    }

    @Override
    public void failed(SyncException error) {
        terminate(error, true);
    }

    /** The timeout timer fired (on the timer's thread: the timer is not disposed from within itself). */
    @Override
    public void run() {
        if (!isDone()) {
            terminate(new SyncTimeoutException(waiter.backend(),
                    waiter + " not signalled within " + Timeouts.describe(timeout)), false);
        }
    }

    /** The engine is being disposed. */
    void engineDisposed() {
        if (!isDone()) {
            terminate(new SyncCancelledException("the engine was disposed while waiting on " + waiter), true);
        }
    }

    /** A {@code Mono<Void>} emits no value: demand changes nothing, but a non-positive one fails (§3.9). */
    @Override
    public void request(long n) {
        if (n <= 0) {
            terminate(reactor.core.Exceptions.nullOrNegativeRequestException(n), true);
        }
    }

    @Override
    public void cancel() {
        terminate(CANCELLED, true);
    }

    /**
     * The one termination: claim, dispose the timer, release, then report — see the class comment.
     *
     * @return whether this call terminated the wait
     */
    private boolean terminate(Throwable outcome, boolean disposeTimer) {
        if (!STATE.compareAndSet(this, ACTIVE, outcome == CANCELLED ? CANCELLED_STATE : DONE)) {
            return false;
        }
        if (disposeTimer) {
            Disposable t = timer;
            if (t != null) {
                try {
                    t.dispose();
                } catch (Throwable e) {
                    LOG.log(System.Logger.Level.WARNING, "disposing the timer of " + this + " failed", e);
                }
            }
        }
        Registration r = (Registration) HELD.getAndSet(this, RELEASED);
        if (r == null) {
            report(outcome);
            return true;
        }
        if (r instanceof Registration.InPlace) { // the usual callback: release here, then report (no hand-over)
            releaseQuietly(r);
            sink.terminated(this, outcome); // only this winner reports: no second report to guard against
            return true;
        }
        Runnable report = () -> report(outcome);
        try {
            r.release(report);
        } catch (Throwable e) {
            LOG.log(System.Logger.Level.WARNING, "releasing " + this + " failed; its outcome is delivered", e);
            report.run();
        }
        return true;
    }

    private void report(Throwable outcome) {
        if (REPORTED.compareAndSet(this, false, true)) {
            sink.terminated(this, outcome);
        }
    }

    private void releaseQuietly(Registration r) {
        try {
            r.release();
        } catch (Throwable e) {
            LOG.log(System.Logger.Level.WARNING, "releasing a registration of " + this + " failed", e);
        }
    }

    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.ACTUAL) {
            return actual;
        }
        if (key == Attr.CANCELLED) {
            return state == CANCELLED_STATE;
        }
        if (key == Attr.TERMINATED) {
            return state == DONE;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    @Override
    public String stepName() {
        return "gpusync.await";
    }

    @Override
    public String toString() {
        return "PendingWait[" + waiter + ", " + path() + (isDone() ? ", done" : "") + "]";
    }
}
