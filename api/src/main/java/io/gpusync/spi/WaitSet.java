package io.gpusync.spi;

import java.time.Duration;
import java.util.List;

/**
 * A group of primitives one thread can block on at once (e.g. the timeline semaphores of one Vulkan
 * device, waited on with {@code VK_SEMAPHORE_WAIT_ANY_BIT}), with a private wake-up primitive in the same
 * wait so that another thread can interrupt the wait in microseconds.
 *
 * <p>Engines compare wait sets with {@code equals} to group the {@link WaitSetMember}s they serve.
 * Thread-safe: {@link #wakeUp()} is called from any thread while another blocks in {@link #awaitAny}.
 */
public interface WaitSet {

    /**
     * Blocks until at least one of {@code members} may be signalled, {@link #wakeUp()} is called, or
     * {@code slice} elapses; early (spurious) returns are allowed, so callers probe the members afterwards.
     * An empty {@code members} list blocks on the wake-up primitive alone.
     *
     * @throws io.gpusync.SyncException on a driver failure that affects the whole set (device lost)
     */
    void awaitAny(List<? extends WaitSetMember> members, Duration slice);

    /** Makes a concurrent (or the next) {@link #awaitAny} return promptly. Cheap, non-blocking. */
    void wakeUp();

    /**
     * Whether the set is gone for good (its device released): no member can join it any more, so an engine
     * thread serving it may end. Never blocks. The default: never.
     */
    default boolean isClosed() {
        return false;
    }
}
