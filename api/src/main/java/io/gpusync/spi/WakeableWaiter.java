package io.gpusync.spi;

import io.gpusync.SyncTimeoutException;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * A {@link BlockingWaiter} whose blocked threads can be woken from outside: an engine that waits on it in
 * slices calls {@link #wakeWaiters()} when the wait it serves ends without the point being signalled (a
 * cancel, a timeout, the engine's dispose), so its thread leaves the native wait at once instead of at the
 * end of the slice.
 *
 * <p>A backend implements it only where its API has a wake-up primitive: a {@code CpuTimeline} parks threads
 * (it unparks them); a Vulkan timeline semaphore is waited on together with a companion timeline semaphore of
 * its device, which the wake signals from the host. Where the API has none (an EGL or GL fence, a
 * {@code VkFence}) the waiter stays a plain {@link BlockingWaiter}, and a cancelled wait keeps its thread for
 * at most one slice.
 *
 * <p>Two methods: the wake, and the form of {@code await} it reaches, which also takes the engine's
 * "this wait has ended" check so that a wait ending while its thread is on its way in is not missed.
 */
public interface WakeableWaiter extends BlockingWaiter {

    /**
     * Makes every thread now blocked in this waiter's {@link #await(Duration, BooleanSupplier)} return at once
     * as if its timeout had passed: it throws {@link io.gpusync.SyncTimeoutException} (a spurious end of the
     * slice for an engine, which looks at its wait's state and blocks again if the wait is still active),
     * unless the point is signalled first, in which case it returns normally. A thread that enters
     * {@code await} after this call has begun is not affected. No effect on the point's state, nor on the
     * outcome of waits of other waiters (a backend whose wake is per device, as Vulkan's, wakes their threads
     * too, and they wait again).
     *
     * <p><b>Threading and blocking.</b> May be called from any thread, any number of times, concurrently
     * with {@code await}, {@code isSignaled} and itself; never blocks (at most a short lock or one
     * non-blocking driver call) and never throws for a waiter that is closed or whose device is gone (it
     * then does nothing). Safe to call from a Reactor cancel or timeout hook.
     *
     * <p><b>Cancellation.</b> This is not a cancellation of the point: a thread woken here that calls
     * {@code await} again waits again. A thread that awaits the same waiter object as an engine's wait may
     * therefore see a {@link io.gpusync.SyncTimeoutException} before its timeout when the engine ends that
     * wait.
     *
     * <p>Whether a thread in the plain {@link io.gpusync.SyncWaiter#await await(Duration)} is woken too is the
     * backend's choice, said in its Javadoc: a host timeline's is (waking costs nothing there); a Vulkan
     * timeline semaphore's is not, since the wait-any that makes it wakeable costs CPU on some drivers.
     */
    void wakeWaiters();

    /**
     * {@link io.gpusync.SyncWaiter#await await(timeout)} in the form that {@link #wakeWaiters()} reaches, for
     * an engine whose wait may end while its thread is on its way into the native wait: it also ends as if its
     * timeout had passed when {@code abandoned} holds once the calling thread has become reachable by
     * {@link #wakeWaiters()}. An engine that makes {@code abandoned} true and then calls
     * {@code wakeWaiters()} thus frees the thread whatever the interleaving: either the thread sees
     * {@code abandoned}, or the wake sees the thread.
     *
     * <p>The default checks {@code abandoned} once before {@code await(timeout)}, which leaves a short window
     * in which a wake is missed (the thread is then freed by the end of its timeout), and is reached by a wake
     * only where the plain {@code await} is; implementations override it and check {@code abandoned} after
     * they have registered the thread for wakes.
     *
     * @param abandoned read on the calling thread; must not block
     * @throws SyncTimeoutException on a timeout, a wake, or {@code abandoned}
     */
    default void await(Duration timeout, BooleanSupplier abandoned) {
        if (abandoned.getAsBoolean() && !isSignaled()) {
            throw new SyncTimeoutException(backend(), this + ": the wait was abandoned");
        }
        await(timeout);
    }
}
