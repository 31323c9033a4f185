package io.gpusync.reactor;

import io.gpusync.SyncWaiter;

/**
 * One way of waiting ({@link WaitPath}): accepts the waiters whose abilities it can use, starts waits and
 * frees them. The engine asks its strategies in order of cost and gives each waiter to the first that
 * accepts it.
 */
interface WaitStrategy {

    WaitPath path();

    /** Whether this strategy can serve {@code waiter} (by the abilities it advertises). */
    boolean accepts(SyncWaiter waiter);

    /**
     * Starts waiting for {@code wait}; completes it through {@link PendingWait#signalled()} /
     * {@link PendingWait#failed(Throwable)}, possibly synchronously. What it registers it hands to the wait
     * as a {@link Registration} ({@link PendingWait#attach}), which the wait releases once, before its
     * subscriber is signalled. Must tolerate a wait that was cancelled (terminated) concurrently, before or
     * during the call ({@code attach} then releases the registration at once).
     */
    void start(PendingWait wait);

    /** Stops this strategy's threads (the engine has already terminated every wait). */
    default void shutdown() {
    }
}
