package io.gpusync.spi;

import io.gpusync.SyncWaiter;

/** A waiter that can be waited on together with the other members of its {@link WaitSet}. */
public interface WaitSetMember extends SyncWaiter {
    /** The set this waiter belongs to (stable for the waiter's life). */
    WaitSet waitSet();
}
