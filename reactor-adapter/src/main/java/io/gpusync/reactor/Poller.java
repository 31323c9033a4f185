package io.gpusync.reactor;

import io.gpusync.BackendKind;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * One poller of {@link SpinThenPoll}: a queue of incoming waits and the thread that probes them, a {@link Worker}.
 *
 * <p><b>Stuck probes.</b> A probe is meant to be cheap, but a driver may take a lock inside one that another thread
 * holds for a long time (NVIDIA's {@code glIsSync} while a release of the same driver runs elsewhere). So that one
 * such probe holds up no wait of another driver family, each probe is published ({@link Worker#probing}) and the
 * {@link SpinThenPoll} guard {@linkplain #watch watches} it: a probe still in flight one guard tick later is stuck.
 * The guard then retires the stuck worker and gives a fresh worker (a new thread) every wait of the poller but those
 * of the stuck probe's {@link BackendKind}: those, and any that arrive while the probe is stuck, are held for the
 * stuck worker, which hands them back to the poller once its probe returns (completing the probed wait if it found
 * it signalled or failed) and ends. Retirement is one CAS on the probe's slot that either the guard or the returning
 * worker wins, so the waits' lists change owner only while their old owner cannot touch them.
 *
 * <p><b>Threading.</b> {@link #add} and {@link #stop} from any thread, never blocking; {@link #watch} from the guard's
 * thread only; a worker's lists are confined to its thread until the guard takes them.
 */
final class Poller {
    /** What a worker whose probe the guard took over reads when its probe returns. */
    private static final long RETIRED = -1;
    private static final VarHandle PROBING;

    static {
        try {
            PROBING = MethodHandles.lookup().findVarHandle(Worker.class, "probing", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final System.Logger LOG = System.getLogger(Poller.class.getName());
    /** Below this a poller spins rather than parks (a timed park oversleeps by more than a short wait lasts). */
    private static final long SPIN_BELOW_NANOS = 50_000;
    /**
     * The longest a worker holding waits sleeps, whatever their schedule says (the cold list's longest interval): a
     * schedule gone wrong then costs a late probe, never a wait the poller sleeps through.
     */
    private static final long MAX_PARK_NANOS = AdaptiveProbePass.COLD_MAX_INTERVAL;

    private final Queue<PendingWait> incoming = new ConcurrentLinkedQueue<>();
    /** Workers retired while stuck in a probe, until it returns; a wait of their family is held for them. */
    private final ConcurrentLinkedQueue<Worker> stranded = new ConcurrentLinkedQueue<>();
    private final long idleSpinNanos;
    private final ThreadFactory threads;
    private final SpinThenPoll.Guard guard;
    private volatile Worker worker;
    private volatile boolean stopped;

    /** @param idle the idle strategy of the poller's workers, or {@code null}: adaptive probing */
    Poller(IdleStrategy idle, long idleSpinNanos, ThreadFactory threads, SpinThenPoll.Guard guard) {
        this.idleSpinNanos = idleSpinNanos;
        this.threads = threads;
        this.guard = guard;
        this.worker = new Worker(idle, new HashMap<>());
    }

    /**
     * Queues the wait; the first wait starts the worker's thread. Takes no lock (a subscriber that found another one
     * starting the thread would have waited for that start): whoever wins the CAS starts it, and the thread drains
     * what was queued meanwhile.
     */
    void add(PendingWait wait) {
        incoming.offer(wait);
        Worker w = worker;
        w.startIfNeeded();
        w.wakeIfParked();
    }

    /** Queues a wait again (a stuck worker's held waits, once its probe returned); never throws. */
    private void requeue(PendingWait wait) {
        incoming.offer(wait);
        worker.wakeIfParked();
    }

    /**
     * Tells the worker to stop, without waiting: it ends after its current pass (a thread started after this sees
     * {@code stopped} before its first pass). A stuck worker ends when its probe returns.
     */
    void stop() {
        stopped = true;
        Thread t = worker.thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Whether the worker is awake (its thread started and not parked for want of waits). */
    boolean awake() {
        Worker w = worker;
        return w.started.get() && !w.asleep;
    }

    /** How many workers of this poller are retired and still inside their probe. */
    int strandedWorkers() {
        return stranded.size();
    }

    /**
     * One guard tick (guard's thread): a probe seen in flight at the last tick, at least {@code stuckNanos} ago, and
     * still in flight now, is stuck: its worker is retired if {@code mayRetire}.
     *
     * @return whether the worker is awake (the guard keeps ticking), else it is parked with no wait to probe
     */
    boolean watch(long now, long stuckNanos, boolean mayRetire) {
        Worker w = worker;
        if (!awake()) {
            return false;
        }
        long probe = (long) PROBING.getVolatile(w);
        if (probe <= 0 || probe != w.seenProbe) {
            w.seenProbe = probe;
            w.seenAt = now;
        } else if (now - w.seenAt >= stuckNanos && mayRetire && !stopped) {
            retire(w, probe);
        }
        return true;
    }

    /** {@code stuck}'s probe number {@code probe} is stuck: its waits of other families go to a new worker. */
    private void retire(Worker stuck, long probe) {
        PendingWait probed = stuck.current; // the wait of this probe, unless it has ended (then the CAS fails)
        if (probed == null) {
            return;
        }
        BackendKind family = probed.waiter.backend();
        stuck.family = family;
        stranded.add(stuck); // before the CAS: from then on the new worker holds this family's arrivals for it
        if (!PROBING.compareAndSet(stuck, probe, RETIRED)) {
            stranded.remove(stuck); // it returned meanwhile
            return;
        }
        Worker next = new Worker(stuck.idle, stuck.sources);
        for (PendingWait x : stuck.active) {
            if (x.waiter.backend() != family) {
                next.active.add(x);
            }
        }
        for (PendingWait x : stuck.cold) {
            if (x.waiter.backend() != family) {
                next.cold.add(x);
            }
        }
        worker = next;
        LOG.log(System.Logger.Level.DEBUG, () -> "a " + family + " probe is stuck: the other waits of "
                + stuck.thread.getName() + " move to a new thread");
        try {
            next.startIfNeeded();
        } catch (Throwable e) { // no thread to be had now: the next wait added tries again
            LOG.log(System.Logger.Level.WARNING, "no thread for a poller's waits", e);
        }
    }

    /**
     * A poller's thread and the waits it probes. Its lists are confined to its thread until the guard retires it
     * (then the guard reads them, and the new worker owns the waits of other families).
     */
    final class Worker implements Runnable, ProbePass.Prober {
        final ArrayList<PendingWait> active = new ArrayList<>();
        final ArrayList<PendingWait> cold = new ArrayList<>();
        /** Learned completion times, by waiter class (handed on to the next worker). */
        final HashMap<Class<?>, CompletionTimes> sources;
        /** The fixed idle strategy, or {@code null}: adaptive probing. */
        final IdleStrategy idle;
        private final AtomicBoolean started = new AtomicBoolean();
        volatile Thread thread;
        private volatile boolean idleParked;
        /** Parked with no wait at all: the guard need not watch it. */
        volatile boolean asleep;
        private long lastActivity;
        /** Probes made; the number of the one in flight is {@link #probing}. */
        private long probes;
        /** The wait being probed, published by the write of {@link #probing}. */
        PendingWait current;
        /** 0, the number of the probe in flight, or {@link #RETIRED}. */
        @SuppressWarnings("unused") // through PROBING
        private volatile long probing;
        /** The guard's: the probe it saw at its last tick, and when. */
        long seenProbe;
        long seenAt;
        /** Once retired: the family whose waits are held for it, and those that arrived after its retirement. */
        volatile BackendKind family;
        private final Queue<PendingWait> held = new ConcurrentLinkedQueue<>();
        private volatile boolean released;

        Worker(IdleStrategy idle, HashMap<Class<?>, CompletionTimes> sources) {
            this.idle = idle;
            this.sources = sources;
        }

        void startIfNeeded() {
            if (thread == null && !stopped && started.compareAndSet(false, true)) {
                try {
                    Thread t = threads.newThread(this);
                    t.start();
                    thread = t;
                } catch (Throwable e) { // no thread to be had: the next wait tries again
                    started.set(false);
                    throw e;
                }
            }
        }

        void wakeIfParked() {
            Thread t = thread;
            if (idleParked && t != null) {
                LockSupport.unpark(t);
            }
        }

        /**
         * The probe of {@code w}, published for the guard. If the guard retired this worker meanwhile, the outcome
         * goes to {@code w} here and {@link ProbePass#STRANDED} unwinds the pass: the lists are no longer this
         * worker's to change.
         */
        @Override
        public boolean isSignaled(PendingWait w) {
            long probe = ++probes;
            current = w;
            PROBING.setRelease(this, probe);
            boolean signalled;
            try {
                signalled = w.waiter.isSignaled();
            } catch (Throwable e) {
                if (!endProbe(probe)) {
                    w.failed(e);
                    throw ProbePass.STRANDED;
                }
                throw e;
            }
            if (!endProbe(probe)) {
                if (signalled) {
                    w.signalled();
                }
                throw ProbePass.STRANDED;
            }
            return signalled;
        }

        /** Whether the probe ended with this worker still in charge (else the guard retired it). */
        private boolean endProbe(long probe) {
            if (PROBING.compareAndSet(this, probe, 0L)) {
                current = null; // holds no wait (nor its waiter) between probes
                return true;
            }
            return false;
        }

        @Override
        public void run() {
            thread = Thread.currentThread(); // before its first look at stopped (see stop())
            guard.start();
            guard.wake(); // a worker started after the guard parked
            try {
                if (idle == null) {
                    runAdaptive();
                } else {
                    runFixed();
                }
            } catch (ProbePass.Stranded retired) {
                handBack();
            }
        }

        /** Retired, and the probe has returned: this family's waits go back to the poller, and the thread ends. */
        private void handBack() {
            BackendKind f = current.waiter.backend();
            released = true;
            for (ArrayList<PendingWait> list : java.util.List.of(active, cold)) {
                for (PendingWait x : list) {
                    if (x.waiter.backend() == f && !x.isDone()) {
                        requeue(x);
                    }
                }
            }
            for (PendingWait x; (x = held.poll()) != null; ) {
                requeue(x);
            }
            stranded.remove(this);
        }

        private void runFixed() {
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
                int completions = ProbePass.run(active, this);
                long t1 = System.nanoTime();
                if (completions > 0 || arrived) {
                    lastActivity = t1;
                }
                idle.idle(completions, t1 - t0);
            }
            active.clear();
            incoming.clear();
        }

        private void runAdaptive() {
            AdaptiveProbePass.Outcome pass = new AdaptiveProbePass.Outcome();
            long coldDue = System.nanoTime();
            while (!stopped) {
                boolean arrived = drainIncoming();
                if (active.isEmpty() && cold.isEmpty()) {
                    idleWithNoWaits();
                    continue;
                }
                AdaptiveProbePass.run(active, cold, sources, idleSpinNanos, pass, this);
                int completions = pass.completions;
                long now = System.nanoTime();
                if (!cold.isEmpty() && now - coldDue >= 0) {
                    completions += AdaptiveProbePass.runCold(cold, active, sources, idleSpinNanos, this, pass);
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
                long wait = Math.min(nextDue - now, MAX_PARK_NANOS);
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
            asleep = true;
            if (incoming.isEmpty() && !stopped) {
                LockSupport.park(this);
            }
            idleParked = false;
            asleep = false;
            guard.wake(); // it may have parked, seeing every poller asleep
        }

        private boolean drainIncoming() {
            boolean any = false;
            for (PendingWait w; (w = incoming.poll()) != null; ) {
                if (stranded.isEmpty() || !heldForStranded(w)) {
                    active.add(w);
                }
                any = true;
            }
            return any;
        }

        /** Whether {@code w} is of a family whose probe is stuck in a retired worker: it then waits for that one. */
        private boolean heldForStranded(PendingWait w) {
            BackendKind f = w.waiter.backend();
            for (Worker s : stranded) {
                if (s != this && s.family == f && !s.released) {
                    s.held.offer(w);
                    if (s.released) { // it may have handed back its held waits already: take what is left
                        for (PendingWait x; (x = s.held.poll()) != null; ) {
                            active.add(x);
                        }
                    }
                    return true;
                }
            }
            return false;
        }
    }
}
