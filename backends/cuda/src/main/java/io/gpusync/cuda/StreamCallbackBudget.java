package io.gpusync.cuda;

import io.gpusync.SyncException;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The room for stream callbacks armed behind an event on a private stream, and the arms that wait for it.
 *
 * <p><b>Why.</b> The driver holds only so many callbacks pending behind cross-stream event waits; past that, the
 * launch blocks inside the driver until the device has drained the work in front of the first ones, holding the
 * driver lock that every other CUDA call of the process needs. A server with many waits past their spin budget
 * would stall its own launches for as long as its longest kernel.
 *
 * <p><b>What.</b> At most {@link #capacity()} (default {@value #DEFAULT_CAPACITY}, system property
 * {@value #CAPACITY_PROPERTY}) such callbacks are outstanding per service. An arm that finds no room is
 * <em>deferred</em>, never blocked: it joins a FIFO served by one daemon thread ({@code gpusync-cuda-armer}) that
 * arms the oldest deferred entries as callbacks run and free room, and meanwhile probes them itself
 * ({@link Arming#complete()}): first {@value #FIRST_PROBE_NANOS} ns after deferral, then half the entry's age after
 * each probe (at most {@value #MAX_PROBE_NANOS} ns), so an entry is seen complete at most ≈ 50 % of its age late.
 * Young entries (interval under {@value #YOUNG_NANOS} ns) are probed whenever due; older ones share a budget of
 * {@value #PROBES_PER_SECOND} probes per second, served earliest deadline first, their due times on a power-of-two
 * grid so that one wake-up serves many. With nothing deferred the thread parks without a timeout.
 *
 * <p><b>Faults.</b> A context with a sticky error gives its callbacks' room back at once ({@link #contextFailed}).
 * A deferred arm has no callback in flight: if its context has none either
 * ({@link StreamCallbacks#reportsOwnFaults}), deferring it asks {@link CudaFaultWatch} to watch the context. A probe
 * that returns the context's sticky error fails every registration of the context; a probe that queried the
 * driver successfully vouches for the context ({@link CudaFaultWatch#vouch}).
 *
 * <p><b>Threading.</b> Thread-safe; {@link #arm} never blocks for room. {@link #streamCallbackRan} runs on driver
 * threads and only counts and unparks.
 */
final class StreamCallbackBudget {
    static final int DEFAULT_CAPACITY = 32;
    /** The system property that sets {@link #capacity()}. */
    static final String CAPACITY_PROPERTY = "gpusync.cuda.streamCallbacksBehindEvents";
    /** The property's earlier name, still read when the current one is not set. */
    static final String OLD_CAPACITY_PROPERTY = "gpusync.cuda.hostFunctionsBehindEvents";
    static final long FIRST_PROBE_NANOS = 20_000L;
    /**
     * The longest interval between two probes of one deferred entry. Intervals grow by half after each probe that
     * finds the work incomplete (a wait is seen at most ≈ 50 % of its age late), so long-pending entries cost ever
     * less; the cap bounds how late the end of very long work is seen.
     */
    static final long MAX_PROBE_NANOS = 1L << 30; // ≈ 1.07 s
    /** The armer's probe budget: the cost of deferral stays bounded however many entries are deferred. */
    static final int PROBES_PER_SECOND = 10_000;
    /**
     * The most probes the budget holds (half a second's worth): entries that fall due together on the grid are probed
     * in one wake-up, up to this many, so a burst does not leave a backlog that holds back newer entries.
     */
    static final double BUDGET_BURST = PROBES_PER_SECOND / 2.0;
    /** Once the budget is spent, the armer waits until this many probes have accrued. */
    static final double BUDGET_BATCH = 64;
    /** Entries probed at shorter intervals than this are young: probed whenever due, outside the budget. */
    static final long YOUNG_NANOS = 1_000_000L;
    /**
     * The armer never sleeps longer than this while entries are deferred: room that frees wakes it
     * ({@link #streamCallbackRan}, {@link #contextFailed}, a failed arm), so this only bounds a missed wake-up
     * (a short bound would cost the idle armer a wake-up per bound).
     */
    static final long MAX_PARK_NANOS = 50_000_000L;
    private static final System.Logger LOG = System.getLogger(StreamCallbackBudget.class.getName());
    private final CudaDriverService service;
    private final int capacity;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Keys of the stream callbacks that hold room, by key → context address. */
    private final Map<Long, Long> holding = new ConcurrentHashMap<>();
    private final ConcurrentLinkedDeque<Arming> deferred = new ConcurrentLinkedDeque<>();
    /** The probe schedule of each deferred entry (identity: entries are distinct objects). */
    private final Map<Arming, Schedule> schedules = new ConcurrentHashMap<>();
    /** Schedules not yet in the armer's heap. */
    private final java.util.concurrent.ConcurrentLinkedQueue<Schedule> incoming =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Young and old deferred entries by when they are due (armer thread only; entries that left are skipped lazily). */
    private final java.util.PriorityQueue<Schedule> young =
            new java.util.PriorityQueue<>((x, y) -> Long.compare(x.due - y.due, 0));
    /** Old entries by when they are due, the younger first among those due together (armer thread only). */
    private final java.util.PriorityQueue<Schedule> old = new java.util.PriorityQueue<>((x, y) -> {
        int byDue = Long.compare(x.due - y.due, 0);
        return byDue != 0 ? byDue : Long.compare(x.interval, y.interval);
    });
    /**
     * Old entries that are due and wait for the budget, earliest deadline first: an entry's deadline is its due time
     * plus its interval (how late a probe may come before the entry is seen later than its schedule allows), ties the
     * younger first: served by due time alone, a backlog of long-pending entries that fell due together on the grid
     * would hold back an entry whose interval is milliseconds for up to a second. Armer thread only.
     */
    private final java.util.PriorityQueue<Schedule> ready = new java.util.PriorityQueue<>((x, y) -> {
        int byDeadline = Long.compare((x.due + x.interval) - (y.due + y.interval), 0);
        return byDeadline != 0 ? byDeadline : Long.compare(x.interval, y.interval);
    });
    private final OnDemandDaemon armer = new OnDemandDaemon("gpusync-cuda-armer", this::run);
    /** Probes the armer may make now (armer thread only), refilled at {@value #PROBES_PER_SECOND} per second. */
    private double budget;
    private long lastPass = System.nanoTime();

    StreamCallbackBudget(CudaDriverService service, int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity " + capacity);
        }
        this.service = service;
        this.capacity = capacity;
    }

    /** The capacity the system property sets ({@value #DEFAULT_CAPACITY} if unset; at least 1). */
    static int configuredCapacity() {
        Integer earlier = Integer.getInteger(OLD_CAPACITY_PROPERTY);
        return Math.max(1, Integer.getInteger(CAPACITY_PROPERTY, earlier != null ? earlier : DEFAULT_CAPACITY));
    }

    /**
     * One stream callback to arm behind an event on a private stream. The entry keeps what it arms behind valid
     * while it is deferred ({@link #hold()} … {@link #leave()}).
     */
    interface Arming {
        /** The stream callback's registration key ({@link StreamCallbacks#register}). */
        long key();

        /** The context the stream callback belongs to (its address). */
        long context();

        /**
         * Arms it now ({@link StreamCallbacks#launchAfterEvent}); room has been granted.
         *
         * @param held whether the entry was deferred and its {@link #hold()} still keeps what it arms behind valid
         *             through this call; if not (armed at once, on the registering thread), the entry must hold it
         *             itself, since another thread may complete and release it meanwhile
         * @return false if there is nothing to arm any more (the entry's source was released)
         */
        boolean arm(boolean held);

        /** Whether the work the stream callback stands behind is complete; a probe that never blocks. */
        boolean complete();

        /** Whether {@link #complete()} queries the driver in the context (a success then shows it has no sticky error). */
        default boolean probeQueriesContext() {
            return false;
        }

        /** The entry is deferred: keep what it arms behind valid until {@link #leave()}. */
        default void hold() {
        }

        /** The entry left the queue (armed, completed, failed or dropped). */
        default void leave() {
        }
    }

    /** An {@link Arming} of one registration key in one context. */
    abstract static class Entry implements Arming {
        private final long key;
        private final long context;

        Entry(long key, java.lang.foreign.MemorySegment context) {
            this.key = key;
            this.context = context.address();
        }

        @Override
        public final long key() {
            return key;
        }

        @Override
        public final long context() {
            return context;
        }
    }

    /** The most stream callbacks outstanding behind event waits. */
    int capacity() {
        return capacity;
    }

    /** Stream callbacks outstanding behind event waits now (tests). */
    int inFlight() {
        return inFlight.get();
    }

    /** The armer thread, null before its first wake-up and after it ended (tests). */
    Thread armerThread() {
        return armer.thread();
    }

    /** Arms deferred because there was no room (tests). */
    int deferred() {
        return deferred.size();
    }

    /**
     * Arms {@code arming} now if there is room (the caller's thread makes the driver calls; errors propagate with
     * the room given back), else defers it. Never blocks for room.
     */
    void arm(Arming arming) {
        if (deferred.isEmpty() && tryTake(arming)) {
            boolean armed = false;
            try {
                armed = arming.arm(false);
            } finally {
                if (!armed && giveBack(arming.key()) && !deferred.isEmpty()) {
                    wakeArmer(); // an entry deferred meanwhile may take the room
                }
            }
            return;
        }
        arming.hold();
        Schedule schedule = new Schedule(arming);
        schedules.put(arming, schedule);
        deferred.add(arming);
        incoming.add(schedule);
        wakeArmer();
        if (!service.callbacks().reportsOwnFaults(arming.context())) {
            service.faultWatch().watch(); // no callback of its context in flight: only the watch would see a fault
        }
    }

    /** Whether any arm is deferred (cheap: for the driver thread). */
    boolean anyDeferred() {
        return !deferred.isEmpty();
    }

    /** A stream callback ran (driver thread): its room, if it held any, is free again. Only counts and unparks. */
    void streamCallbackRan(long key) {
        if (giveBack(key) && !deferred.isEmpty()) {
            armer.unparkIfStarted();
        }
    }

    /**
     * {@code context} has a sticky error: its callbacks' waits have all been failed (the callbacks still run, with the
     * error), so their room is free again.
     */
    void contextFailed(long context) {
        holding.forEach((key, ctx) -> {
            if (ctx == context) {
                giveBack(key);
            }
        });
        wakeArmer();
    }

    private boolean tryTake(Arming arming) {
        int n;
        do {
            n = inFlight.get();
            if (n >= capacity) {
                return false;
            }
        } while (!inFlight.compareAndSet(n, n + 1));
        holding.put(arming.key(), arming.context());
        return true;
    }

    private boolean giveBack(long key) {
        if (holding.remove(key) != null) {
            inFlight.decrementAndGet();
            return true;
        }
        return false;
    }

    /** The service closes: the armer thread ends once nothing is deferred (a later deferral starts another). */
    void close() {
        armer.close();
    }

    private void wakeArmer() {
        armer.wake();
    }

    private void run() {
        while (true) {
            if (deferred.isEmpty()) {
                if (armer.endIfClosing(deferred::isEmpty)) {
                    return;
                }
                LockSupport.park(this);
                continue;
            }
            long park = MAX_PARK_NANOS;
            try {
                armWhileRoom();
                park = probeDue();
            } catch (RuntimeException | Error t) { // never let the armer die: deferred waits would hang
                LOG.log(System.Logger.Level.ERROR, "the CUDA armer failed a pass", t);
            }
            if (!deferred.isEmpty()) {
                LockSupport.parkNanos(this, Math.max(park, FIRST_PROBE_NANOS / 2));
            }
        }
    }

    /** Arms the oldest deferred entries while there is room. */
    private void armWhileRoom() {
        Arming a;
        while ((a = deferred.peek()) != null) {
            if (!service.callbacks().registered(a.key())) { // failed, cancelled or completed meanwhile
                leave(a);
                continue;
            }
            if (!tryTake(a)) {
                break;
            }
            if (!deferred.remove(a)) {
                giveBack(a.key());
                continue;
            }
            Schedule gone = schedules.remove(a);
            if (gone != null) {
                gone.left = true;
            }
            try {
                if (!a.arm(true)) {
                    giveBack(a.key());
                }
            } catch (SyncException e) {
                giveBack(a.key());
                service.callbacks().failKey(a.key(), e);
            } finally {
                a.leave();
            }
        }
    }

    /**
     * Probes the deferred entries that are due, soonest first and within the probe budget, completing those whose
     * work is done and backing off the others; returns how long until the next one is due (at most
     * {@value #MAX_PARK_NANOS} ns).
     */
    private long probeDue() {
        for (Schedule s; (s = incoming.poll()) != null; ) {
            young.add(s);
        }
        long now = System.nanoTime();
        budget = Math.min(budget + (now - lastPass) * PROBES_PER_SECOND / 1_000_000_000.0, BUDGET_BURST);
        lastPass = now;
        probeDue(young, now, false);
        for (Schedule s; (s = old.peek()) != null && now - s.due >= 0; ) {
            ready.add(old.poll()); // every due entry at once: those due together are served in one wake-up
        }
        long wait = probeDue(ready, now, true);
        Schedule o = old.peek();
        if (o != null && ready.isEmpty()) {
            wait = Math.min(wait, Math.max(0, o.due - System.nanoTime()));
        }
        Schedule y = young.peek();
        if (y != null) {
            wait = Math.min(wait, Math.max(0, y.due - System.nanoTime()));
        }
        return wait;
    }

    /**
     * Probes the entries of {@code heap} due at {@code now}, in the heap's order (within the budget if
     * {@code budgeted}); returns how long until the next one is due or the budget allows one more (at most
     * {@value #MAX_PARK_NANOS} ns).
     */
    private long probeDue(java.util.PriorityQueue<Schedule> heap, long now, boolean budgeted) {
        Schedule s;
        while ((s = heap.peek()) != null && now - s.due >= 0) {
            if (s.left) {
                heap.poll();
                continue;
            }
            Arming a = s.arming;
            if (!service.callbacks().registered(a.key())) {
                heap.poll();
                leave(a);
                continue;
            }
            if (budgeted) {
                if (budget < 1) { // back when a batch's worth has accrued: one wake-up per batch, not per probe
                    return (long) ((BUDGET_BATCH - budget) * 1_000_000_000.0 / PROBES_PER_SECOND) + 1;
                }
                budget -= 1;
            }
            heap.poll();
            try {
                if (a.complete()) {
                    if (leave(a)) {
                        service.callbacks().fireKey(a.key());
                    }
                    continue;
                }
                if (a.probeQueriesContext()) {
                    service.faultWatch().vouch(a.context());
                }
            } catch (SyncException e) {
                if (e.kind() == io.gpusync.ErrorKind.FATAL && !(e instanceof io.gpusync.SyncCancelledException)) {
                    service.callbacks().failContext(a.context(), e); // sticky: every wait of the context, not just this one
                }
                if (leave(a)) {
                    service.callbacks().failKey(a.key(), e);
                }
                continue;
            } catch (RuntimeException e) { // a probe's bug must not drop the entry from the schedule
                LOG.log(System.Logger.Level.WARNING, "probing a deferred CUDA stream-callback arm threw", e);
            }
            // half its age: seen at most ≈ 50 % late, however few probes the budget has allowed it so far
            s.interval = Math.min(Math.max(FIRST_PROBE_NANOS, (now - s.since) / 2), MAX_PROBE_NANOS);
            s.due = nextDue(now, s.interval);
            (s.interval < YOUNG_NANOS ? young : old).add(s);
        }
        return s == null ? MAX_PARK_NANOS : Math.min(MAX_PARK_NANOS, Math.max(0, s.due - System.nanoTime()));
    }

    /**
     * When an entry probed at {@code now} is due next: {@code interval} later for a young entry; for an older one the
     * next multiple of the interval's power of two, so that entries of similar ages fall due together and one
     * wake-up of the armer serves them all (a wake-up costs more than the probes it makes).
     */
    static long nextDue(long now, long interval) {
        if (interval < YOUNG_NANOS) {
            return now + interval;
        }
        long grid = Long.highestOneBit(interval);
        return now - Math.floorMod(now, grid) + grid;
    }

    /** Takes {@code a} out of the queue; {@code true} if this call did (and ran its {@link Arming#leave()}). */
    private boolean leave(Arming a) {
        if (deferred.remove(a)) {
            Schedule s = schedules.remove(a);
            if (s != null) {
                s.left = true;
            }
            a.leave();
            return true;
        }
        return false;
    }

    /** When a deferred entry is probed next, and its current interval. Touched by the armer thread only. */
    private static final class Schedule {
        final Arming arming;
        final long since = System.nanoTime();
        long due = since + FIRST_PROBE_NANOS;
        long interval = FIRST_PROBE_NANOS;
        volatile boolean left;

        Schedule(Arming arming) {
            this.arming = arming;
        }
    }
}
