package io.gpusync.cuda;

import io.gpusync.SyncException;

import java.util.Iterator;
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
 * meanwhile probes the deferred entries itself ({@link Arming#complete()}: one {@code cuEventQuery} or a memory
 * read; at most {@value #PROBES_PER_PASS} per pass) at an interval that starts at {@value #FIRST_PROBE_NANOS} ns
 * and doubles to {@value #MAX_PROBE_NANOS} ns while nothing completes — so an entry behind a long kernel of
 * another stream is not held up by it. With nothing deferred the thread parks without a timeout.
 *
 * <p><b>Faults.</b> Host functions of a context with a sticky error never run: {@link #contextFailed} gives their
 * room back. A deferred entry whose registration has been failed or cancelled is dropped.
 *
 * <p>Thread-safe. {@link #hostFunctionRan} runs on driver threads and only counts and unparks.
 */
final class HostFunctionBudget {
    static final int DEFAULT_CAPACITY = 32;
    static final int PROBES_PER_PASS = 256;
    static final long FIRST_PROBE_NANOS = 20_000L;
    static final long MAX_PROBE_NANOS = 1_000_000L;
    private static final System.Logger LOG = System.getLogger(HostFunctionBudget.class.getName());
    private static final int CAPACITY = Math.max(1, Integer.getInteger("gpusync.cuda.hostFunctionsBehindEvents",
            DEFAULT_CAPACITY));
    private static final AtomicInteger IN_FLIGHT = new AtomicInteger();
    /** Keys of the host functions that hold room, by key → context address. */
    private static final Map<Long, Long> HOLDING = new ConcurrentHashMap<>();
    private static final ConcurrentLinkedDeque<Arming> DEFERRED = new ConcurrentLinkedDeque<>();
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
        long interval = FIRST_PROBE_NANOS;
        while (true) {
            if (DEFERRED.isEmpty()) {
                LockSupport.park(HostFunctionBudget.class);
                interval = FIRST_PROBE_NANOS;
                continue;
            }
            boolean progress;
            try {
                progress = armWhileRoom() | probe();
            } catch (RuntimeException | Error t) { // never let the armer die: deferred waits would hang
                LOG.log(System.Logger.Level.ERROR, "the CUDA armer failed a pass", t);
                progress = false;
            }
            interval = progress ? FIRST_PROBE_NANOS : Math.min(interval * 2, MAX_PROBE_NANOS);
            if (!DEFERRED.isEmpty()) {
                LockSupport.parkNanos(HostFunctionBudget.class, interval);
            }
        }
    }

    /** Arms the oldest deferred entries while there is room; returns whether any entry left the queue. */
    private static boolean armWhileRoom() {
        boolean progress = false;
        Arming a;
        while ((a = DEFERRED.peek()) != null) {
            if (!HostFunctions.registered(a.key())) { // failed, cancelled or completed meanwhile
                leave(a);
                progress = true;
                continue;
            }
            if (!tryTake(a)) {
                break;
            }
            if (!DEFERRED.remove(a)) {
                giveBack(a.key());
                continue;
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
            progress = true;
        }
        return progress;
    }

    /** Probes up to {@value #PROBES_PER_PASS} deferred entries, completing those whose work is done. */
    private static boolean probe() {
        boolean progress = false;
        int n = 0;
        for (Iterator<Arming> it = DEFERRED.iterator(); it.hasNext() && n < PROBES_PER_PASS; n++) {
            Arming a = it.next();
            if (!HostFunctions.registered(a.key())) {
                progress |= leave(a);
                continue;
            }
            try {
                if (a.complete() && DEFERRED.remove(a)) {
                    HostFunctions.fireKey(a.key());
                    a.leave();
                    progress = true;
                }
            } catch (SyncException e) {
                if (DEFERRED.remove(a)) {
                    HostFunctions.failKey(a.key(), e);
                    a.leave();
                    progress = true;
                }
            }
        }
        return progress;
    }

    private static boolean leave(Arming a) {
        if (DEFERRED.remove(a)) {
            a.leave();
            return true;
        }
        return false;
    }
}
