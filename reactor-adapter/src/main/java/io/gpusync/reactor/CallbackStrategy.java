package io.gpusync.reactor;

import io.gpusync.SyncException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * {@link WaitPath#CALLBACK}: registers a listener with the waiter's API and lets no thread wait. Completions
 * that arrive on a driver-owned thread are handed to an engine event loop first, so user code never runs
 * there; completions from the signalling thread of a host timeline are delivered in place.
 */
final class CallbackStrategy implements WaitStrategy {
    private final Executor handoff;

    CallbackStrategy(Executor handoff) {
        this.handoff = handoff;
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
        wait.registration = registration;
        if (wait.isDone()) {
            registration.cancel(); // terminated while registering: release() found nothing to cancel yet
        }
    }

    @Override
    public void release(PendingWait wait) {
        if (wait.registration instanceof CallbackRegistration registration) {
            registration.cancel();
        }
    }

    /** Runs on the driver's thread: only hands the outcome over to an engine thread. */
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
            try {
                handoff.execute(task);
            } catch (RejectedExecutionException shuttingDown) {
                // the engine is being disposed: dispose terminates this wait with SyncCancelledException
            }
        }
    }
}
