package io.gpusync.reactor;

import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.WakeableWaiter;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.concurrent.Executor;

/**
 * {@link WaitPath#BLOCKING}: the dedicated waiter-thread pool. Platform threads (native calls pin virtual
 * threads) block in the waiter's native wait in slices of at most {@code slice}, and look at the wait's
 * state between slices — so a cancelled or timed-out wait holds its thread for at most one slice.
 *
 * <p><b>Wakeable waiters.</b> For a {@link WakeableWaiter} the pool attaches to the wait a registration
 * whose release — run by whoever terminates the wait (a cancel, the timeout timer, the engine's dispose),
 * before the subscriber hears of it — calls {@link WakeableWaiter#wakeWaiters()}: the serving thread leaves
 * the native wait at once, finds the wait done and is free. The thread waits through
 * {@link WakeableWaiter#await(Duration, java.util.function.BooleanSupplier)} with the wait's state as the
 * abandonment check, so a wait that ends while the thread is on its way into the native wait is not missed
 * (the terminator marks the wait done before it wakes). A waiter that is not wakeable keeps its thread until
 * the slice ends (or the point is signalled).
 *
 * <p>Threads
 * are created on demand and retire after {@code keepAlive} idle; at most {@code maxThreads} waits are served
 * at once (a permit counter), and a wait that finds no permit is served by the probe scheduler instead of
 * queueing behind long waits. Handing a wait to a thread takes no lock that another thread can hold
 * ({@link WaiterThreads}: a lock-free stack of idle threads), so subscribing never blocks the subscribing thread.
 *
 * <p>The engine does not probe such waits at subscription (a probe may be expensive: an EGL sync binds a
 * context); their first probe runs here, on a pool thread. A {@code Duration.ZERO} wait is one probe on a
 * pool thread (or, with the pool full, on {@link Schedulers#boundedElastic()}).
 *
 * <p><b>Lent threads.</b> A waiter whose backend lends threads ({@link BlockingWaiter#waitThreads()}) is served
 * the same way on one of those, under the same bound, and its wait completes there: its driver calls need no
 * hand-off to the backend's threads, and no thread of the engine's ever makes them.
 *
 * <p>Shutdown never waits: idle threads end at once, and a serving thread leaves at the end of its slice (at once
 * for a wakeable waiter, which the disposal wakes); the engine's {@link EngineThreads} tells when all have ended
 * and every lent task has returned.
 */
final class WaiterPool implements WaitStrategy {
    private static final Registration.InPlace NOTHING_TO_WAKE = () -> { };
    private final WaiterThreads threads;
    private final EngineThreads engineThreads;
    private final Duration slice;
    private final WaitStrategy overflow;

    WaiterPool(int maxThreads, Duration slice, Duration keepAlive, EngineThreads engineThreads,
               WaitStrategy overflow) {
        this.threads = new WaiterThreads(maxThreads, keepAlive.toNanos(), engineThreads.role("waiter"));
        this.engineThreads = engineThreads;
        this.slice = slice;
        this.overflow = overflow;
        // Reactor creates its shared boundedElastic on first use, and of two threads that race to create it, one
        // disposes the scheduler it made under that scheduler's queue lock: create it here, not on an event loop
        Schedulers.boundedElastic();
    }

    @Override
    public WaitPath path() {
        return WaitPath.BLOCKING;
    }

    @Override
    public boolean accepts(SyncWaiter waiter) {
        return waiter instanceof BlockingWaiter;
    }

    @Override
    public void start(PendingWait wait) {
        boolean probeOnly = wait.timeout.isZero();
        Runnable task = probeOnly ? () -> probeOnce(wait) : () -> serve(wait);
        Executor lender = ((BlockingWaiter) wait.waiter).waitThreads();
        if (lender == null ? threads.tryStart(task) : threads.tryLend(task, t -> engineThreads.lend(lender, t))) {
            return;
        }
        if (probeOnly) {
            try {
                Schedulers.boundedElastic().schedule(() -> probeOnce(wait));
            } catch (RuntimeException refused) {
                wait.failed(refused); // never probe on the subscribing thread
            }
        } else {
            wait.strategy = overflow;
            overflow.start(wait);
        }
    }

    private static void probeOnce(PendingWait wait) {
        try {
            if (wait.waiter.isSignaled()) {
                wait.signalled();
            } else {
                wait.failed(new SyncTimeoutException(wait.waiter.backend(), wait.waiter + " not signalled (probe)"));
            }
        } catch (Throwable e) {
            wait.failed(e);
        }
    }

    private void serve(PendingWait wait) {
        WakeableWaiter wakeable = wait.waiter instanceof WakeableWaiter w ? w : null;
        if (wakeable != null) {
            wait.attach((Registration.InPlace) wakeable::wakeWaiters); // released at once if already done
        }
        while (!wait.isDone()) {
            try {
                if (wakeable != null) {
                    wakeable.await(slice, wait::isDone); // the wait ends → done, then the wake: never missed
                } else {
                    wait.waiter.await(slice);
                }
                leftTheWait(wait, wakeable);
                wait.signalled();
                return;
            } catch (SyncTimeoutException sliceOver) {
                // look at the wait's state, then block again
            } catch (Throwable e) {
                leftTheWait(wait, wakeable);
                wait.failed(e);
                return;
            }
        }
    }

    /**
     * The thread has left the native wait for good: its wake registration is swapped for one that does nothing,
     * so the termination that follows wakes no other thread of the waiter (a Vulkan wake reaches every thread
     * blocked on the device).
     */
    private static void leftTheWait(PendingWait wait, WakeableWaiter wakeable) {
        if (wakeable != null) {
            wait.attach(NOTHING_TO_WAKE);
        }
    }

    /** Stops the pool without waiting: idle threads end at once, serving ones once their wait is left. */
    @Override
    public void shutdown() {
        threads.shutdown();
    }
}
