package io.gpusync.reactor;

import io.gpusync.SyncWaiter;

import java.util.ArrayList;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * {@link WaitPath#PROBE}: the fallback scheduler for waiters that can only be probed. A few poller threads
 * (created on first use) share all probe-only waits. By default (no {@link IdleStrategy} configured) a poller is
 * adaptive: it learns each source's completion times ({@link CompletionTimes}, per waiter class) and probes each wait
 * only when its completion is likely soon — spinning through a short kernel's hot window, polling a long one's a few
 * dozen times, sleeping before it — while waits long overdue or idle go to a cold list probed under ≈ 0.4 % of a
 * core in all ({@link AdaptiveProbePass}). With an {@link IdleStrategy} it makes passes over its waits, probing
 * every one, and idles between passes as that strategy says. A
 * poller whose last wait just finished keeps spinning for the spin budget (consecutive waits — a pipeline
 * awaiting kernel after kernel — then find it hot), then parks until a wait arrives, so an idle scheduler
 * costs no CPU. Cancelled and timed-out
 * waits leave the poller's list at its next pass.
 */
final class SpinThenPoll implements WaitStrategy {
    private final Poller[] pollers;
    private final AtomicInteger next = new AtomicInteger();

    /**
     * @param idle     the idle strategy of each poller, or {@code null}: the adaptive scheduler (the default), which
     *                 learns each source's completion times and probes each wait when its completion is likely soon
     *                 (see {@link AdaptiveProbePass})
     */
    SpinThenPoll(int pollerThreads, Supplier<IdleStrategy> idle, long idleSpinNanos, ThreadFactory threads) {
        pollers = new Poller[pollerThreads];
        for (int i = 0; i < pollerThreads; i++) {
            pollers[i] = new Poller(idle != null ? idle.get() : null, idleSpinNanos, threads);
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

    /** Tells the pollers to stop; never waits (the engine's {@link EngineThreads} tells when they have ended). */
    @Override
    public void shutdown() {
        for (Poller p : pollers) {
            p.stop();
        }
    }

    private static final class Poller implements Runnable {
        private final Queue<PendingWait> incoming = new ConcurrentLinkedQueue<>();
        private final ArrayList<PendingWait> active = new ArrayList<>();
        private final IdleStrategy idle;
        private final long idleSpinNanos;
        private final ThreadFactory threads;
        private long lastActivity;
        private volatile Thread thread;
        private final AtomicBoolean started = new AtomicBoolean();
        private volatile boolean idleParked;
        private volatile boolean stopped;

        Poller(IdleStrategy idle, long idleSpinNanos, ThreadFactory threads) {
            this.idle = idle;
            this.idleSpinNanos = idleSpinNanos;
            this.threads = threads;
        }

        /**
         * Queues the wait; the first wait starts the thread. Takes no lock (a subscriber that found another one
         * starting the thread would have waited for that start): whoever wins the CAS starts it, and the thread
         * drains what was queued meanwhile.
         */
        void add(PendingWait wait) {
            incoming.offer(wait);
            Thread t = thread;
            if (t == null && !stopped && started.compareAndSet(false, true)) {
                try {
                    t = threads.newThread(this);
                    t.start();
                    thread = t;
                } catch (Throwable e) { // no thread to be had: the next wait tries again
                    started.set(false);
                    throw e;
                }
            }
            if (idleParked && t != null) {
                LockSupport.unpark(t);
            }
        }

        /**
         * Tells the thread to stop, without waiting: it ends after its current pass (a thread started after this
         * sees {@code stopped} before its first pass).
         */
        void stop() {
            stopped = true;
            Thread t = thread;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }

        @Override
        public void run() {
            if (idle == null) {
                runAdaptive();
                return;
            }
            while (!stopped) {
                boolean arrived = drainIncoming();
                if (active.isEmpty()) {
                    idleWithNoWaits();
                    continue;
                }
                if (arrived) {
                    idle.reset();
                }
                long t0 = System.nanoTime();
                int completions = ProbePass.run(active);
                long t1 = System.nanoTime();
                if (completions > 0 || arrived) {
                    lastActivity = t1;
                }
                idle.idle(completions, t1 - t0);
            }
            active.clear();
            incoming.clear();
        }

        /**
         * No wait to probe: stay hot for the spin budget after the last activity (waits tend to follow each other),
         * then park until a wait arrives.
         */
        private void idleWithNoWaits() {
            if (System.nanoTime() - lastActivity < idleSpinNanos) {
                Thread.onSpinWait();
                return;
            }
            idleParked = true;
            if (incoming.isEmpty() && !stopped) {
                LockSupport.park(this);
            }
            idleParked = false;
        }

        /** Below this a poller spins rather than parks (a timed park oversleeps by more than a short wait lasts). */
        private static final long SPIN_BELOW_NANOS = 50_000;

        private void runAdaptive() {
            java.util.HashMap<Class<?>, CompletionTimes> sources = new java.util.HashMap<>();
            AdaptiveProbePass.Outcome pass = new AdaptiveProbePass.Outcome();
            ArrayList<PendingWait> cold = new ArrayList<>();
            long coldDue = System.nanoTime();
            while (!stopped) {
                boolean arrived = drainIncoming();
                if (active.isEmpty() && cold.isEmpty()) {
                    idleWithNoWaits();
                    continue;
                }
                AdaptiveProbePass.run(active, cold, sources, idleSpinNanos, pass);
                int completions = pass.completions;
                long now = System.nanoTime();
                if (!cold.isEmpty() && now - coldDue >= 0) {
                    completions += AdaptiveProbePass.runCold(cold, active, sources, idleSpinNanos);
                    long after = System.nanoTime();
                    coldDue = after + AdaptiveProbePass.coldInterval(after - now);
                    now = after;
                } else if (cold.isEmpty()) {
                    coldDue = now + AdaptiveProbePass.COLD_MIN_INTERVAL;
                }
                if (completions > 0 || arrived) {
                    lastActivity = now;
                }
                long nextDue = cold.isEmpty() ? pass.nextDue : Math.min(pass.nextDue, coldDue);
                if (active.isEmpty() && cold.isEmpty()) {
                    continue;
                }
                long wait = nextDue - now;
                if (wait < SPIN_BELOW_NANOS) {
                    Thread.onSpinWait();
                    continue;
                }
                idleParked = true; // a new wait wakes the poller: it may be due at once
                if (incoming.isEmpty() && !stopped) {
                    LockSupport.parkNanos(this, wait);
                }
                idleParked = false;
            }
            active.clear();
            cold.clear();
            incoming.clear();
        }

        private boolean drainIncoming() {
            boolean any = false;
            for (PendingWait w; (w = incoming.poll()) != null; ) {
                active.add(w);
                any = true;
            }
            return any;
        }
    }
}
