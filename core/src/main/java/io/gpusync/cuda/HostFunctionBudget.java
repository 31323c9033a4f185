package io.gpusync.cuda;

import io.gpusync.SyncException;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The driver's room for host functions armed behind an event on a private stream, and the arms that wait for it.
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
 * meanwhile probes every deferred entry itself ({@link Arming#complete()}: one {@code cuEventQuery} or a memory
 * read), each on its own schedule: first {@value #FIRST_PROBE_NANOS} ns after it was deferred, then at an interval
 * that doubles up to {@value #MAX_PROBE_NANOS} ns while it stays incomplete. So a new entry behind a short kernel
 * completes within tens of µs even while the room and the queue's head are held by waits that take seconds (a
 * gate, a long kernel of another stream) — no entry is starved — and a thousand long-pending entries cost about
 * 1,000 × 2 µs per {@value #MAX_PROBE_NANOS} ns ≈ 10 % of a core at most. With nothing deferred the thread parks
 * without a timeout.
 *
 * <p><b>Faults.</b> Host functions of a context with a sticky error never run: {@link #contextFailed} gives their
 * room back. A deferred entry whose registration has been failed or cancelled is dropped.
 *
 * <p>Thread-safe. {@link #hostFunctionRan} runs on driver threads and only counts and unparks.
 */
final class HostFunctionBudget {
    static final int DEFAULT_CAPACITY = 32;
    static final long FIRST_PROBE_NANOS = 20_000L;
    static final long MAX_PROBE_NANOS = 20_000_000L;
    /** The armer never sleeps longer than this while entries are deferred (room may free without an unpark). */
    static final long MAX_PARK_NANOS = 1_000_000L;
    private static final System.Logger LOG = System.getLogger(HostFunctionBudget.class.getName());
    private static final int CAPACITY = Math.max(1, Integer.getInteger("gpusync.cuda.hostFunctionsBehindEvents",
            DEFAULT_CAPACITY));
    private static final AtomicInteger IN_FLIGHT = new AtomicInteger();
    /** Keys of the host functions that hold room, by key → context address. */
    private static final Map<Long, Long> HOLDING = new ConcurrentHashMap<>();
    private static final ConcurrentLinkedDeque<Arming> DEFERRED = new ConcurrentLinkedDeque<>();
    /** The probe schedule of each deferred entry (identity: entries are distinct objects). */
    private static final Map<Arming, Schedule> SCHEDULES = new ConcurrentHashMap<>();
    private static volatile Thread armer;

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

        /** The entry is deferred: keep what it arms behind valid until {@link #leave()}. */
        default void hold() {
        }

        /** The entry left the queue (armed, completed, failed or dropped). */
        default void leave() {
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
                if (!armed) {
                    giveBack(arming.key());
                }
            }
            return;
        }
        arming.hold();
        SCHEDULES.put(arming, new Schedule());
        DEFERRED.add(arming);
        wakeArmer();
    }

    /** A host function ran (driver thread): its room, if it held any, is free again. Only counts and unparks. */
    static void hostFunctionRan(long key) {
        if (giveBack(key) && !DEFERRED.isEmpty()) {
            Thread t = armer;
            if (t != null) {
                LockSupport.unpark(t);
            }
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
        Thread t = armer;
        if (t == null) {
            synchronized (HostFunctionBudget.class) {
                t = armer;
                if (t == null) {
                    t = new Thread(HostFunctionBudget::run, "gpusync-cuda-armer");
                    t.setDaemon(true);
                    armer = t;
                    t.start();
                    return;
                }
            }
        }
        LockSupport.unpark(t);
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
            SCHEDULES.remove(a);
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
     * Probes the deferred entries that are due, completing those whose work is done and backing off the others;
     * returns how long until the next entry is due (at most {@value #MAX_PARK_NANOS} ns).
     */
    private static long probeDue() {
        long now = System.nanoTime();
        long next = now + MAX_PARK_NANOS;
        for (java.util.Iterator<Arming> it = DEFERRED.iterator(); it.hasNext(); ) {
            Arming a = it.next();
            Schedule s = SCHEDULES.get(a);
            if (s == null) {
                continue; // just left
            }
            if (!HostFunctions.registered(a.key())) {
                leave(it, a);
                continue;
            }
            if (now - s.due < 0) {
                next = earlier(next, s.due);
                continue;
            }
            try {
                if (a.complete()) {
                    leave(it, a);
                    HostFunctions.fireKey(a.key());
                    continue;
                }
            } catch (SyncException e) {
                leave(it, a);
                HostFunctions.failKey(a.key(), e);
                continue;
            }
            s.interval = Math.min(s.interval * 2, MAX_PROBE_NANOS);
            s.due = System.nanoTime() + s.interval;
            next = earlier(next, s.due);
        }
        return Math.max(0, next - System.nanoTime());
    }

    private static long earlier(long a, long b) {
        return a - b <= 0 ? a : b;
    }

    /** Takes {@code a} out of the queue; {@code true} if this call did (and ran its {@link Arming#leave()}). */
    private static boolean leave(Arming a) {
        if (DEFERRED.remove(a)) {
            SCHEDULES.remove(a);
            a.leave();
            return true;
        }
        return false;
    }

    /** {@link #leave(Arming)} through the probing iterator (O(1)); only the armer thread removes entries. */
    private static void leave(java.util.Iterator<Arming> it, Arming a) {
        it.remove();
        SCHEDULES.remove(a);
        a.leave();
    }

    /** When a deferred entry is probed next, and its current interval. Touched by the armer thread only. */
    private static final class Schedule {
        long due = System.nanoTime() + FIRST_PROBE_NANOS;
        long interval = FIRST_PROBE_NANOS;
    }
}
