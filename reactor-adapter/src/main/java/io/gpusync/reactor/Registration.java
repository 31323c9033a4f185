package io.gpusync.reactor;

/**
 * What a {@link WaitStrategy} holds for one wait — a callback registration, a wait-set membership, an fd
 * watch — owned by the strategy and handed to the wait with {@link PendingWait#attach}. The wait releases it
 * exactly once, when it terminates, <em>before</em> its subscriber is signalled, so that a subscriber may
 * close the primitive in {@code doOnError}/{@code doFinally}. A registration attached to a wait that has
 * already terminated is released at once by {@code attach}.
 */
@FunctionalInterface
interface Registration {

    /** Frees what the strategy registered. Called once, on the terminating thread; must not block. */
    void release();

    /**
     * Frees the registration, then runs {@code afterwards} (the delivery of the wait's outcome). By default
     * both happen in place. A registration whose native deregistration must run on another thread (an epoll
     * loop) may run {@code afterwards} there once it is done — then it must run it exactly once, whatever
     * happens to that thread; if this method throws instead, the wait delivers its outcome itself (a second
     * run of {@code afterwards} does nothing).
     */
    default void release(Runnable afterwards) {
        release();
        afterwards.run();
    }

    /**
     * A registration released in place by {@link #release()} alone, its {@code release(Runnable)} being the
     * default: the wait then reports its outcome directly, with no task object (the common callback path).
     */
    interface InPlace extends Registration {
        @Override
        default void release(Runnable afterwards) {
            release();
            afterwards.run();
        }
    }
}
