package io.gpusync.reactor.soak;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;

import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;

/**
 * The state every ticket shares: signal or fail once, never after {@link #finish()}, the awaited waiter
 * closed at most once (and, at random, left to the {@code Cleaner} instead, as an application that forgets to
 * close does). Subclasses give the driver calls.
 *
 * <p>A ticket whose awaited waiter is the only owner of its primitive ({@link #waiterOwnsPrimitive}) may be
 * closed only while no submission that signals it is pending: once signalled, {@link #closeWaiter()} leaves the
 * close to {@link #finish()}, which waits for the signal to land first; once closed, {@link #signal()} does
 * nothing. No method holds the ticket's lock while it calls a driver or waits.
 */
abstract class OwnedTicket implements Ticket {
    private final String source;
    private final SyncPoint awaited;
    private final SyncWaiter waiter;
    private final boolean waiterOwnsPrimitive;
    private boolean signalled;  // guarded by this
    private boolean finished;   // guarded by this
    private boolean waiterClosed; // guarded by this
    private int signalsInCall;    // guarded by this: signal()/fail() calls still inside the driver

    OwnedTicket(String source, SyncPoint awaited, SyncWaiter waiter, boolean waiterOwnsPrimitive) {
        this.source = source;
        this.awaited = awaited;
        this.waiter = waiter;
        this.waiterOwnsPrimitive = waiterOwnsPrimitive;
    }

    @Override
    public final String source() {
        return source;
    }

    @Override
    public final SyncWaiter waiter() {
        return waiter;
    }

    @Override
    public final SyncPoint point() {
        return awaited;
    }

    @Override
    public boolean signalsItself() {
        return false;
    }

    /** The host action that signals the point. */
    abstract void doSignal();

    /** The driver-side failure, where {@link #canFail()}. */
    void doFail() {
        throw new UnsupportedOperationException(source + " cannot fail");
    }

    /** Whether the signal has reached the primitive (polled by {@link #finish()} after a signal). */
    abstract boolean landed();

    /** Drops the ticket's own view and anything else it made (after the awaited waiter was dealt with). */
    abstract void release();

    @Override
    public final void signal() {
        hostCall(this::doSignal);
    }

    @Override
    public final void fail() {
        hostCall(this::doFail);
    }

    /** Signals or fails the point once, counting the call while it is inside the driver. */
    private void hostCall(Runnable call) {
        synchronized (this) {
            if (finished || signalled || (waiterClosed && waiterOwnsPrimitive)) {
                return;
            }
            signalled = true;
            signalsInCall++;
        }
        try {
            call.run();
        } finally {
            leftTheCall();
        }
    }

    private synchronized void leftTheCall() {
        signalsInCall--;
        notifyAll();
    }

    /** An application keeps its handles until its own calls on them have returned. */
    private synchronized void awaitCallsReturned() {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (signalsInCall > 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IllegalStateException(this + ": a signal call did not return within 10 s");
            }
            try {
                wait(left / 1_000_000 + 1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Closes the awaited waiter now, unless it owns the primitive and a signal may be pending on the GPU: then
     * {@link #finish()} closes it once the signal has landed. Never blocks.
     */
    @Override
    public final void closeWaiter() {
        synchronized (this) {
            if (waiterClosed || (signalled && waiterOwnsPrimitive)) {
                return;
            }
            waiterClosed = true;
        }
        waiter.close();
    }

    @Override
    public final void finish() {
        boolean signalNow;
        boolean awaitSignal;
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            boolean primitiveGone = waiterClosed && waiterOwnsPrimitive;
            signalNow = !signalled && !primitiveGone; // drivers want their objects signalled before release
            signalled |= signalNow;
            awaitSignal = signalled && !primitiveGone;
        }
        if (signalNow) {
            doSignal();
        }
        awaitCallsReturned();
        if (awaitSignal) {
            awaitLanded();
        }
        boolean closeNow;
        synchronized (this) {
            closeNow = !waiterClosed && ThreadLocalRandom.current().nextInt(8) != 0; // 1 in 8 left to the Cleaner
            waiterClosed = true;
        }
        if (closeNow) {
            waiter.close();
        }
        release();
    }

    private void awaitLanded() {
        awaitTrue(this::landedQuietly, 10_000, () -> this + ": the signal did not land within 10 s");
    }

    private boolean landedQuietly() {
        try {
            return landed();
        } catch (RuntimeException failedPoint) {
            return true; // a failed point has landed too
        }
    }

    static void awaitTrue(BooleanSupplier condition, long millis, java.util.function.Supplier<String> what) {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(what.get());
            }
            Thread.onSpinWait();
            try {
                Thread.sleep(0, 200_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(what.get() + " (interrupted)");
            }
        }
    }

    @Override
    public String toString() {
        return source + "[" + waiter + "]";
    }
}
