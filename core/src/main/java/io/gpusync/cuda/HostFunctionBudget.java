package io.gpusync.cuda;

import io.gpusync.SyncException;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The driver's room for host callbacks armed behind an event on a private stream, and the arms that wait for it.
 * (Host functions and stream callbacks alike: {@link HostFunctions} launches stream callbacks.)
 *
 * <p><b>Why.</b> The CUDA driver holds only so many host functions pending behind cross-stream event waits
 * ({@code cuStreamWaitEvent} then {@code cuLaunchHostFunc}): measured on the H200 (driver 580), the 57th blocks the
 * launching thread inside {@code cuLaunchHostFunc} until the device has drained the work in front of the first
 * ones — with one private stream per arm, with a pool of 1, 8, 16 or 32 streams alike — and while it is blocked
 * every other CUDA call of the process ({@code cuStreamCreate}, {@code cuStreamWriteValue64}, …) waits for the same
 * driver lock. A server with more than 56 waits past their spin budget would stall a wait's start, the timeline's
 * advance and the user's own launches for as long as its longest kernel. (Host functions on the recording stream
 * itself are not limited that way: 3,000 pending did not block.)
 *
 * <p><b>What.</b> At most {@link #capacity()} (default {@value #DEFAULT_CAPACITY}, system property
 * {@code gpusync.cuda.hostFunctionsBehindEvents}) such host functions are outstanding in the process. An arm that
 * finds no room is <em>deferred</em>, never blocked: it joins a FIFO served by one daemon thread
 * ({@code gpusync-cuda-armer}) that arms the oldest deferred entries as host functions run and free room, and
 * meanwhile probes the deferred entries itself ({@link Arming#complete()}: one {@code cuEventQuery} or a memory
 * read), each on its own schedule — first {@value #FIRST_PROBE_NANOS} ns after it was deferred, then, while it
 * stays incomplete, half its age after each probe (at most {@value #MAX_PROBE_NANOS} ns), earliest deadline first: an
 * entry is seen complete at most ≈ 50 % of its age late, and an entry pending for long costs ever less. Probes
 * of entries past their young ones fall on a grid (multiples of their interval's power of two), so entries of
 * similar ages are probed in one wake-up of the thread.
 * Young entries (an interval under {@value #YOUNG_NANOS} ns: their first ~10 probes) are probed whenever due, so
 * a new entry behind a short kernel completes within tens of µs even while the room and the queue's head are
 * held by waits that take seconds (a gate, a long kernel of another stream): no entry is starved. Older entries
 * share a budget of {@value #PROBES_PER_SECOND} probes per second, so the cost of long-pending deferred waits is
 * bounded — ≈ {@value #PROBES_PER_SECOND} × 2 µs ≈ 2 % of a core however many there are; the budget binds only
 * when the entries' own schedules ask for more (N entries pending for T seconds ask for about 2N / T probes per
 * second, at least N per second once T passes 2 s), and then each is probed about every N / {@value #PROBES_PER_SECOND} s. (With
 * intervals that stopped at 20 ms, 1,000 entries pending for good asked for 50,000 probes/s, so an entry behind
 * a 10 ms kernel waited its turn in the budget and was seen 80 ms late on the H200.) With nothing deferred the
 * thread parks without a timeout.
 *
 * <p><b>Faults.</b> A context with a sticky error fails its callbacks (they run with the error) and
 * {@link #contextFailed} gives their room back at once. A deferred arm has no callback in flight: if none of its
 * context's is ({@link HostFunctions#reportsOwnFaults}), deferring it asks {@link CudaFaultWatch} to watch the context. A deferred entry whose registration has been failed or cancelled is dropped. A probe that returns
 * the context's sticky error fails every registration of that context at once ({@link HostFunctions#failContext});
 * a probe that queried the driver and succeeded vouches for the context, so {@link CudaFaultWatch} skips its own
 * query of it for that interval.
 *
 * <p>Thread-safe. {@link #hostFunctionRan} runs on driver threads and only counts and unparks.
 */
final class HostFunctionBudget {
    static final int DEFAULT_CAPACITY = 32;
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
     * ({@link #hostFunctionRan}, {@link #contextFailed}, a failed arm), so this only bounds a missed wake-up. (It was
     * 1 ms: a thousand wake-ups a second cost the armer ≈ 1.6–2.7 % of a core on these VMs with nothing to do.)
     */
    static final long MAX_PARK_NANOS = 50_000_000L;
    private static final System.Logger LOG = System.getLogger(HostFunctionBudget.class.getName());
    private static final int CAPACITY = Math.max(1, Integer.getInteger("gpusync.cuda.hostFunctionsBehindEvents",
            DEFAULT_CAPACITY));
    private static final AtomicInteger IN_FLIGHT = new AtomicInteger();
    /** Keys of the host functions that hold room, by key → context address. */
    private static final Map<Long, Long> HOLDING = new ConcurrentHashMap<>();
    private static final ConcurrentLinkedDeque<Arming> DEFERRED = new ConcurrentLinkedDeque<>();
    /** The probe schedule of each deferred entry (identity: entries are distinct objects). */
    private static final Map<Arming, Schedule> SCHEDULES = new ConcurrentHashMap<>();
    /** Schedules not yet in the armer's heap. */
    private static final java.util.concurrent.ConcurrentLinkedQueue<Schedule> INCOMING =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Young and old deferred entries by when they are due (armer thread only; entries that left are skipped lazily). */
    private static final java.util.PriorityQueue<Schedule> YOUNG =
            new java.util.PriorityQueue<>((x, y) -> Long.compare(x.due - y.due, 0));
    /** Old entries by when they are due, the younger first among those due together (armer thread only). */
    private static final java.util.PriorityQueue<Schedule> OLD = new java.util.PriorityQueue<>((x, y) -> {
        int byDue = Long.compare(x.due - y.due, 0);
        return byDue != 0 ? byDue : Long.compare(x.interval, y.interval);
    });
    /**
     * Old entries that are due and wait for the budget, earliest deadline first: an entry's deadline is its due time
     * plus its interval (how late a probe may come before the entry is seen later than its schedule allows), ties the
     * younger first. Served by due time alone, a backlog of entries pending for seconds that fell due together on
     * the grid — more than the budget holds — kept an entry whose interval is milliseconds waiting for up to a second
     * behind it (measured on the H200 with 10,000 waits in flight). Armer thread only.
     */
    private static final java.util.PriorityQueue<Schedule> READY = new java.util.PriorityQueue<>((x, y) -> {
        int byDeadline = Long.compare((x.due + x.interval) - (y.due + y.interval), 0);
        return byDeadline != 0 ? byDeadline : Long.compare(x.interval, y.interval);
    });
    private static final OnDemandDaemon ARMER = new OnDemandDaemon("gpusync-cuda-armer", HostFunctionBudget::run);
    /** Probes the armer may make now (armer thread only), refilled at {@value #PROBES_PER_SECOND} per second. */
    private static double budget;
    private static long lastPass = System.nanoTime();

    private HostFunctionBudget() {
    }

    /**
     * One host function to arm behind an event on a private stream. The entry keeps what it arms behind valid
     * while it is deferred ({@link #hold()} … {@link #leave()}).
     */
    interface Arming {
        /** The host function's registration key ({@link HostFunctions#register}). */
        long key();

        /** The context the host function belongs to (its address). */
        long context();

        /**
         * Arms it now ({@link HostFunctions#launchAfterEvent}); room has been granted.
         *
         * @return false if there is nothing to arm any more (the entry's source was released)
         */
        boolean arm();

        /** Whether the work the host function stands behind is complete; a probe that never blocks. */
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

    /** The most host functions outstanding behind event waits. */
    static int capacity() {
        return CAPACITY;
    }

    /** Host functions outstanding behind event waits now (tests). */
    static int inFlight() {
        return IN_FLIGHT.get();
    }

    /** Arms deferred because there was no room (tests). */
    static int deferred() {
        return DEFERRED.size();
    }

    /**
     * Arms {@code arming} now if there is room (the caller's thread makes the driver calls; errors propagate with
     * the room given back), else defers it. Never blocks for room.
     */
    static void arm(Arming arming) {
        if (DEFERRED.isEmpty() && tryTake(arming)) {
            boolean armed = false;
            try {
                armed = arming.arm();
            } finally {
                if (!armed && giveBack(arming.key()) && !DEFERRED.isEmpty()) {
                    wakeArmer(); // an entry deferred meanwhile may take the room
                }
            }
            return;
        }
        arming.hold();
        Schedule schedule = new Schedule(arming);
        SCHEDULES.put(arming, schedule);
        DEFERRED.add(arming);
        INCOMING.add(schedule);
        wakeArmer();
        if (!HostFunctions.reportsOwnFaults(arming.context())) {
            CudaFaultWatch.watch(); // no callback of its context in flight: only the watch would see a fault
        }
    }

    /** Whether any arm is deferred (cheap: for the driver thread). */
    static boolean anyDeferred() {
        return !DEFERRED.isEmpty();
    }

    /** A host function ran (driver thread): its room, if it held any, is free again. Only counts and unparks. */
    static void hostFunctionRan(long key) {
        if (giveBack(key) && !DEFERRED.isEmpty()) {
            ARMER.unparkIfStarted();
        }
    }

    /** {@code context} has a sticky error: its host functions will never run; their room is free again. */
    static void contextFailed(long context) {
        HOLDING.forEach((key, ctx) -> {
            if (ctx == context) {
                giveBack(key);
            }
        });
        wakeArmer();
    }

    private static boolean tryTake(Arming arming) {
        int n;
        do {
            n = IN_FLIGHT.get();
            if (n >= CAPACITY) {
                return false;
            }
        } while (!IN_FLIGHT.compareAndSet(n, n + 1));
        HOLDING.put(arming.key(), arming.context());
        return true;
    }

    private static boolean giveBack(long key) {
        if (HOLDING.remove(key) != null) {
            IN_FLIGHT.decrementAndGet();
            return true;
        }
        return false;
    }

    private static void wakeArmer() {
        ARMER.wake();
    }

    private static void run() {
        while (true) {
            if (DEFERRED.isEmpty()) {
                LockSupport.park(HostFunctionBudget.class);
                continue;
            }
            long park = MAX_PARK_NANOS;
            try {
                armWhileRoom();
                park = probeDue();
            } catch (RuntimeException | Error t) { // never let the armer die: deferred waits would hang
                LOG.log(System.Logger.Level.ERROR, "the CUDA armer failed a pass", t);
            }
            if (!DEFERRED.isEmpty()) {
                LockSupport.parkNanos(HostFunctionBudget.class, Math.max(park, FIRST_PROBE_NANOS / 2));
            }
        }
    }

    /** Arms the oldest deferred entries while there is room. */
    private static void armWhileRoom() {
        Arming a;
        while ((a = DEFERRED.peek()) != null) {
            if (!HostFunctions.registered(a.key())) { // failed, cancelled or completed meanwhile
                leave(a);
                continue;
            }
            if (!tryTake(a)) {
                break;
            }
            if (!DEFERRED.remove(a)) {
                giveBack(a.key());
                continue;
            }
            Schedule gone = SCHEDULES.remove(a);
            if (gone != null) {
                gone.left = true;
            }
            try {
                if (!a.arm()) {
                    giveBack(a.key());
                }
            } catch (SyncException e) {
                giveBack(a.key());
                HostFunctions.failKey(a.key(), e);
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
    private static long probeDue() {
        for (Schedule s; (s = INCOMING.poll()) != null; ) {
            YOUNG.add(s);
        }
        long now = System.nanoTime();
        budget = Math.min(budget + (now - lastPass) * PROBES_PER_SECOND / 1_000_000_000.0, BUDGET_BURST);
        lastPass = now;
        probeDue(YOUNG, now, false);
        for (Schedule s; (s = OLD.peek()) != null && now - s.due >= 0; ) {
            READY.add(OLD.poll()); // every due entry at once: those due together are served in one wake-up
        }
        long wait = probeDue(READY, now, true);
        Schedule o = OLD.peek();
        if (o != null && READY.isEmpty()) {
            wait = Math.min(wait, Math.max(0, o.due - System.nanoTime()));
        }
        Schedule y = YOUNG.peek();
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
    private static long probeDue(java.util.PriorityQueue<Schedule> heap, long now, boolean budgeted) {
        Schedule s;
        while ((s = heap.peek()) != null && now - s.due >= 0) {
            if (s.left) {
                heap.poll();
                continue;
            }
            Arming a = s.arming;
            if (!HostFunctions.registered(a.key())) {
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
                        HostFunctions.fireKey(a.key());
                    }
                    continue;
                }
                if (a.probeQueriesContext()) {
                    CudaFaultWatch.vouch(a.context());
                }
            } catch (SyncException e) {
                if (e.kind() == io.gpusync.ErrorKind.FATAL && !(e instanceof io.gpusync.SyncCancelledException)) {
                    HostFunctions.failContext(a.context(), e); // sticky: every wait of the context, not just this one
                }
                if (leave(a)) {
                    HostFunctions.failKey(a.key(), e);
                }
                continue;
            } catch (RuntimeException e) { // a probe's bug must not drop the entry from the schedule
                LOG.log(System.Logger.Level.WARNING, "probing a deferred CUDA host-function arm threw", e);
            }
            // half its age: seen at most ≈ 50 % late, however few probes the budget has allowed it so far
            s.interval = Math.min(Math.max(FIRST_PROBE_NANOS, (now - s.since) / 2), MAX_PROBE_NANOS);
            s.due = nextDue(now, s.interval);
            (s.interval < YOUNG_NANOS ? YOUNG : OLD).add(s);
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
    private static boolean leave(Arming a) {
        if (DEFERRED.remove(a)) {
            Schedule s = SCHEDULES.remove(a);
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
