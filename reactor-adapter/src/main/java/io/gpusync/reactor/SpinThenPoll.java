package io.gpusync.reactor;

import io.gpusync.SyncWaiter;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * {@link WaitPath#PROBE}: the fallback scheduler for waiters that can only be probed. A few {@link Poller}s
 * (their threads created on first use) share all probe-only waits. By default (no {@link IdleStrategy} configured) a
 * poller is adaptive: it learns each source's completion times ({@link CompletionTimes}, per waiter class) and probes
 * each wait only when its completion is likely soon — spinning through a short kernel's hot window, polling a long
 * one's a few dozen times, sleeping before it — while waits long overdue or idle go to a cold list probed under
 * ≈ 0.4 % of a core in all ({@link AdaptiveProbePass}). With an {@link IdleStrategy} it makes passes over its waits,
 * probing every one, and idles between passes as that strategy says. A poller whose last wait just finished keeps
 * spinning for the spin budget (consecutive waits — a pipeline awaiting kernel after kernel — then find it hot),
 * then parks until a wait arrives, so an idle scheduler costs no CPU. Cancelled and timed-out waits leave the
 * poller's list at its next pass.
 *
 * <p><b>Stuck probes.</b> Probes are assumed cheap, but a driver can block inside one on a lock another thread holds
 * (NVIDIA's {@code glIsSync} during a release elsewhere in the driver). A guard thread (one per scheduler, started with
 * the first poller, parked while every poller is parked with no wait) looks at each poller's probe in flight every
 * {@link #STUCK_NANOS}: a probe seen in flight at two ticks is stuck, and its poller's waits of every other
 * {@link io.gpusync.BackendKind} move to a new thread, while that family's waits stay with the stuck thread until its
 * probe returns (see {@link Poller}). So a stuck probe delays only waits of its own driver family. At most
 * {@link #MAX_STRANDED} threads may be stuck at once; past that, the pollers' waits wait as before.
 */
final class SpinThenPoll implements WaitStrategy {
    /** The guard's tick: a probe in flight at two ticks (this long apart at least) is stuck. */
    static final long STUCK_NANOS = 5_000_000;
    /** The most pollers' threads that may be stuck in a probe at once, beyond the pollers' own. */
    static final int MAX_STRANDED = 4;

    private final Poller[] pollers;
    private final Guard guard;
    private final AtomicInteger next = new AtomicInteger();

    /**
     * @param idle         the idle strategy of each poller, or {@code null}: the adaptive scheduler (the default),
     *                     which learns each source's completion times and probes each wait when its completion is
     *                     likely soon (see {@link AdaptiveProbePass})
     * @param guardThreads the factory of the stuck-probe guard's thread
     */
    SpinThenPoll(int pollerThreads, Supplier<IdleStrategy> idle, long idleSpinNanos, ThreadFactory threads,
                 ThreadFactory guardThreads) {
        pollers = new Poller[pollerThreads];
        guard = new Guard(pollers, guardThreads);
        for (int i = 0; i < pollerThreads; i++) {
            pollers[i] = new Poller(idle != null ? idle.get() : null, idleSpinNanos, threads, guard);
        }
    }

    /**
     * {@link WaitPath#SPIN_THEN_CALLBACK}: waits whose probe is a memory read are probed by the pollers for
     * at most {@code spinBudget} after they start (longer only through a learned window: {@link AdaptiveProbePass}),
     * then handed to {@code callbacks}; with a zero budget they go to {@code callbacks} at once.
     */
    WaitStrategy spinThenCallback(long spinBudgetNanos, WaitStrategy callbacks) {
        SpinThenPoll probe = this;
        return new WaitStrategy() {
            @Override
            public WaitPath path() {
                return WaitPath.SPIN_THEN_CALLBACK;
            }

            @Override
            public boolean accepts(io.gpusync.SyncWaiter waiter) {
                return waiter instanceof io.gpusync.spi.CheapProbe && callbacks.accepts(waiter);
            }

            @Override
            public void start(PendingWait wait) {
                if (spinBudgetNanos == 0) { // no spin asked for: the callback alone, no poller probes or watches it
                    wait.strategy = callbacks;
                    callbacks.start(wait);
                    return;
                }
                PollState polled = new PollState();
                polled.handOverAfterNanos = spinBudgetNanos;
                polled.handOverTo = callbacks;
                wait.polled = polled;
                probe.start(wait);
            }

            // while spinning there is nothing to free; after the hand-over the callback path attaches its own
            // registration
        };
    }

    @Override
    public WaitPath path() {
        return WaitPath.PROBE;
    }

    @Override
    public boolean accepts(SyncWaiter waiter) {
        return true; // every waiter can be probed
    }

    @Override
    public void start(PendingWait wait) {
        if (wait.polled == null) { // before the poller's queue publishes the wait to its thread
            wait.polled = new PollState();
        }
        pollers[Math.floorMod(next.getAndIncrement(), pollers.length)].add(wait);
    }

    // nothing to release: the poller drops done waits at its next pass

    /**
     * Tells the pollers and the guard to stop; never waits (the engine's {@link EngineThreads} tells when they have
     * ended).
     */
    @Override
    public void shutdown() {
        for (Poller p : pollers) {
            p.stop();
        }
        guard.stop();
    }

    /**
     * The stuck-probe guard: a thread that ticks every {@link #STUCK_NANOS} while a poller is awake and parks while
     * all are parked with no wait (a poller that wakes wakes it). It makes no native call and takes no lock.
     */
    static final class Guard implements Runnable {
        private final Poller[] pollers;
        private final ThreadFactory threads;
        private final AtomicBoolean started = new AtomicBoolean();
        private volatile Thread thread;
        private volatile boolean parked;
        private volatile boolean stopped;

        Guard(Poller[] pollers, ThreadFactory threads) {
            this.pollers = pollers;
            this.threads = threads;
        }

        /** Starts the guard's thread if not yet started (called by each poller thread as it starts). */
        void start() {
            if (thread == null && !stopped && started.compareAndSet(false, true)) {
                try {
                    Thread t = threads.newThread(this);
                    t.start();
                    thread = t;
                } catch (Throwable e) { // the next poller thread to start tries again
                    started.set(false);
                    System.getLogger(SpinThenPoll.class.getName())
                            .log(System.Logger.Level.WARNING, "no thread for the pollers' guard", e);
                }
            }
        }

        /** A poller left its park: the guard ticks again if it was parked. */
        void wake() {
            if (parked) {
                Thread t = thread;
                if (t != null) {
                    LockSupport.unpark(t);
                }
            }
        }

        void stop() {
            stopped = true;
            Thread t = thread;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }

        @Override
        public void run() {
            while (!stopped) {
                if (tick()) {
                    LockSupport.parkNanos(this, STUCK_NANOS);
                    continue;
                }
                parked = true;
                if (!stopped && !anyAwake()) { // a poller that wakes after this read sees parked and unparks the guard
                    LockSupport.park(this);
                }
                parked = false;
            }
        }

        /** @return whether a poller is awake */
        private boolean tick() {
            long now = System.nanoTime();
            boolean awake = false;
            for (Poller p : pollers) {
                awake |= p.watch(now, STUCK_NANOS, stranded() < MAX_STRANDED);
            }
            return awake;
        }

        private int stranded() {
            int n = 0;
            for (Poller p : pollers) {
                n += p.strandedWorkers();
            }
            return n;
        }

        private boolean anyAwake() {
            for (Poller p : pollers) {
                if (p.awake()) {
                    return true;
                }
            }
            return false;
        }
    }
}
