package io.gpusync.reactor;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncWaiter;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;

/**
 * {@link SyncEngine#block} and {@link SyncEngine#future}: engine waits for callers outside Reactor, each a
 * {@link CallerWait} (which starts it on the engine's hand-off threads when the caller is a virtual thread).
 * See {@link SyncEngine} for the semantics; the blocking thread parks ({@link LockSupport#park}), so a virtual
 * thread leaves its carrier while it waits.
 */
final class CallerWaits {
    private CallerWaits() {
    }

    static void block(SyncEngine engine, Executor handoff, SyncWaiter waiter, Duration timeout) {
        Thread me = Thread.currentThread();
        if (NonBlockingThreads.isCurrent()) {
            throw new IllegalStateException("block() is blocking, which is not supported in thread " + me.getName());
        }
        if (timeout.isNegative()) {
            throw WaitArguments.negativeTimeout(timeout);
        }
        if (me.isInterrupted()) {
            throw interrupted(waiter, "before it started");
        }
        Parked parked = new Parked(me);
        CallerWait wait = new CallerWait(engine, waiter, timeout, parked, me);
        wait.start(handoff);
        while (!parked.settled) {
            if (me.isInterrupted()) {
                if (!wait.cancel()) {
                    wait.awaitFreed();
                }
                throw interrupted(waiter, "and was freed");
            }
            LockSupport.park(parked);
        }
        if (parked.error != null) {
            throw CallerWait.unchecked(parked.error);
        }
    }

    static CompletableFuture<Void> future(SyncEngine engine, Executor handoff, SyncWaiter waiter, Duration timeout) {
        WaitFuture f = new WaitFuture();
        if (timeout.isNegative()) {
            f.settled(WaitArguments.negativeTimeout(timeout));
            return f;
        }
        CallerWait wait = new CallerWait(engine, waiter, timeout, f, null);
        f.wait = wait;
        wait.start(handoff);
        return f;
    }

    private static SyncCancelledException interrupted(SyncWaiter waiter, String how) {
        return new SyncCancelledException("the thread was interrupted while waiting on " + waiter + " " + how
                + " (its interrupt flag stays set)");
    }

    /** The outcome of a blocked thread's wait, and its wake-up. */
    private static final class Parked implements CallerWait.Outcome {
        private final Thread thread;
        private Throwable error; // published by the volatile write of settled
        private volatile boolean settled;

        Parked(Thread thread) {
            this.thread = thread;
        }

        @Override
        public void settled(Throwable e) {
            error = e;
            settled = true;
            LockSupport.unpark(thread);
        }
    }

    /**
     * The future of {@link SyncEngine#future}: completed by the wait; cancelling it, or completing it by any other
     * means ({@code complete}, {@code orTimeout}…), frees the wait.
     */
    private static final class WaitFuture extends CompletableFuture<Void> implements CallerWait.Outcome {
        volatile CallerWait wait;

        @Override
        public void settled(Throwable error) {
            if (error == null) {
                super.complete(null);
            } else {
                super.completeExceptionally(error);
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return freedIf(super.cancel(mayInterruptIfRunning));
        }

        @Override
        public boolean complete(Void value) {
            return freedIf(super.complete(value));
        }

        @Override
        public boolean completeExceptionally(Throwable ex) {
            return freedIf(super.completeExceptionally(ex));
        }

        private boolean freedIf(boolean completedHere) {
            CallerWait w = wait;
            if (completedHere && w != null) {
                w.cancel();
            }
            return completedHere;
        }

        @Override
        public <U> CompletableFuture<U> newIncompleteFuture() {
            return new CompletableFuture<>(); // dependent stages are plain futures: cancelling one frees nothing
        }

        @Override
        public String toString() {
            CallerWait w = wait;
            return super.toString() + (w != null ? " on " + w.waiter() : "");
        }
    }
}
