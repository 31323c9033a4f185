package io.gpusync.reactor;

import io.gpusync.SyncException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import reactor.core.scheduler.Schedulers;

import java.util.concurrent.Executor;

/**
 * {@link WaitPath#CALLBACK}: registers a listener with the waiter's API and lets no thread wait. Completions
 * that arrive on a driver-owned thread are handed to an engine event loop first, so user code never runs
 * there; completions from the signalling thread of a host timeline are delivered in place. If the loops
 * refuse the hand-off (a user's group that has been shut down), the completion goes to
 * {@link Schedulers#boundedElastic()} instead, and only if that refuses too is it delivered on the driver's
 * thread: a completion is never dropped.
 */
final class CallbackStrategy implements WaitStrategy {
    private final Executor handoff;

    CallbackStrategy(Executor loops) {
        this.handoff = new LoopHandOff(loops);
    }

    @Override
    public WaitPath path() {
        return WaitPath.CALLBACK;
    }

    @Override
    public boolean accepts(SyncWaiter waiter) {
        return waiter instanceof SignalCallbackWaiter;
    }

    @Override
    public void start(PendingWait wait) {
        SignalCallbackWaiter waiter = (SignalCallbackWaiter) wait.waiter;
        SignalListener listener = waiter.callsBackOnDriverThread() ? new HandOff(wait, handoff) : wait;
        CallbackRegistration registration = waiter.onSignal(listener);
        if (registration != CallbackRegistration.DONE) { // DONE: already answered, nothing to free
            wait.attach(new Release(registration)); // released at once if the wait terminated while registering
        }
    }

    /** Cancels the waiter's registration, in place. */
    private record Release(CallbackRegistration registration) implements Registration.InPlace {
        @Override
        public void release() {
            registration.cancel();
        }
    }

    /** Runs on the driver's thread: only hands the outcome over to another thread. */
    private record HandOff(PendingWait pending, Executor handoff) implements SignalListener {
        @Override
        public void signalled() {
            submit(pending::signalled);
        }

        @Override
        public void failed(SyncException error) {
            submit(() -> pending.failed(error));
        }

        private void submit(Runnable task) {
            if (pending.isDone()) {
                return; // cancelled, timed out or disposed meanwhile: nothing to hand over
            }
            handoff.execute(task); // never refuses: LoopHandOff falls back itself
        }
    }
}
