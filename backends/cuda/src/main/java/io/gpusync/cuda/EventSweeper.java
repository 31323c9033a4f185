package io.gpusync.cuda;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * The thread that sweeps {@link StreamOrder}s ({@code gpusync-cuda-sweeper}, one per service, started on demand and
 * parked without a timeout while nothing is asked of it).
 *
 * <p>A sweep is asked for when a stream's cover runs (on the driver thread, which must not call CUDA, so the probes
 * run here) and when members leave an order (their holds on their events are dropped here, never while this thread
 * probes them). A cover that runs also asks for a <em>sibling</em> check: every order of the same context whose cover
 * waits for room in {@link StreamCallbackBudget} (no callback of its own in flight) gets one probe of its oldest
 * member, so in a burst the streams beyond the budget's room complete as soon as the first callbacks of the context
 * run, not when the armer's schedule comes round. Sibling checks run at most every {@link #SIBLING_NANOS} unless the
 * last one completed something.
 *
 * <p><b>Linger.</b> A sweep that completed members re-sweeps its order on every pass, spinning, until
 * {@link #LINGER_NANOS} pass with nothing new (system property {@value #LINGER_PROPERTY}; 0 turns lingering off):
 * while a burst completes, completions are collected as fast as the probes allow, with no rate limit; once it is
 * over the thread parks again. Its CPU is therefore spent only while completions keep coming — under a sustained
 * stream of completions faster than callbacks, up to one core.
 *
 * <p>Thread-safe; {@link #request} and {@link #deferred} never block (driver threads call them).
 */
final class EventSweeper {
    /** What the sweeper sweeps: a stream's order of events, or a host timeline's listeners. */
    interface Sweepable {
        /** The context (address) whose callbacks trigger sibling checks of it. */
        long context();

        /**
         * One sweep; with {@code onlyIfOldestComplete}, a sibling's check that costs at most one probe when nothing
         * is complete. Sweeper thread only.
         *
         * @return how many waits it completed
         */
        int sweep(boolean onlyIfOldestComplete);

        /** Whether nothing waits on it any more (it stops lingering). */
        boolean idle();

        /** The sweeper stops sweeping it repeatedly: whatever serves its waits meanwhile takes over again. */
        default void settle() {
        }
    }

    /** How long an order that yielded completions keeps being swept after its last productive sweep (default). */
    static final long LINGER_NANOS = 50_000L;
    /** The system property that sets the linger in ns; 0: one sweep per callback, no spinning. */
    static final String LINGER_PROPERTY = "gpusync.cuda.sweepLingerNanos";
    /** The shortest interval between two sibling checks of one context that found nothing. */
    static final long SIBLING_NANOS = 200_000L;
    private static final System.Logger LOG = System.getLogger(EventSweeper.class.getName());
    private final ConcurrentLinkedQueue<StreamOrder> requests = new ConcurrentLinkedQueue<>();
    /** Contexts (addresses) whose orders with deferred covers are to be checked. */
    private final Set<Long> siblingChecks = ConcurrentHashMap.newKeySet();
    /** Orders and timelines whose cover waits for room in the budget. */
    private final Set<Sweepable> deferredCovers = ConcurrentHashMap.newKeySet();
    private final OnDemandDaemon thread = new OnDemandDaemon("gpusync-cuda-sweeper", this::run);
    // sweeper thread only
    private final Map<Sweepable, Long> lingering = new java.util.HashMap<>();
    private final Map<Long, Long> nextSiblingCheck = new java.util.HashMap<>();
    private final long lingerNanos;

    EventSweeper(long lingerNanos) {
        this.lingerNanos = Math.max(0, lingerNanos);
    }

    /** The linger the system property sets ({@value #LINGER_NANOS} ns if unset). */
    static long configuredLinger() {
        return Long.getLong(LINGER_PROPERTY, LINGER_NANOS);
    }

    /** Asks for a sweep of {@code order}, and with {@code siblings} a check of its context's deferred orders. */
    void request(StreamOrder order, boolean siblings) {
        boolean news = siblings && !deferredCovers.isEmpty() && siblingChecks.add(order.context());
        if (order.queued.compareAndSet(false, true)) {
            requests.add(order);
            news = true;
        }
        if (news) {
            thread.wake(); // else already asked for: no second unpark
        }
    }

    /**
     * A stream callback of {@code context} ran (a host timeline's cover, on the driver thread): checks the context's
     * deferred covers, if there are any (else nothing: no wake-up).
     */
    void callbackRan(long context) {
        if (!deferredCovers.isEmpty() && siblingChecks.add(context)) {
            thread.wake();
        }
    }

    /** {@code s}'s cover waits for room ({@code true}) or no longer does. */
    void deferred(Sweepable s, boolean deferred) {
        if (deferred) {
            deferredCovers.add(s);
        } else {
            deferredCovers.remove(s);
        }
    }

    /** The sweeper thread, null before its first wake-up and after it ended (tests). */
    Thread thread() {
        return thread.thread();
    }

    /** Lets the thread end once idle. */
    void close() {
        thread.close();
    }

    private boolean idle() {
        return requests.isEmpty() && siblingChecks.isEmpty() && lingering.isEmpty();
    }

    private void run() {
        while (true) {
            try {
                pass();
            } catch (RuntimeException | Error t) { // never let the sweeper die: swept waits would hang
                LOG.log(System.Logger.Level.ERROR, "the CUDA sweeper failed a pass", t);
                settleAll();
            }
            if (!lingering.isEmpty()) {
                Thread.onSpinWait();
                continue;
            }
            if (idle()) {
                if (thread.endIfClosing(this::idle)) {
                    return;
                }
                LockSupport.park(this);
            }
        }
    }

    private void pass() {
        for (StreamOrder o; (o = requests.poll()) != null; ) {
            o.queued.set(false);
            o.dropRetired();
            sweep(o, false);
        }
        if (!lingering.isEmpty()) {
            long now = System.nanoTime();
            for (var it = lingering.entrySet().iterator(); it.hasNext(); ) {
                var e = it.next();
                if (now - e.getValue() > 0 || e.getKey().idle()) {
                    it.remove();
                    e.getKey().settle();
                } else if (e.getKey().sweep(false) > 0) {
                    e.setValue(System.nanoTime() + lingerNanos);
                }
            }
        }
        if (!siblingChecks.isEmpty()) {
            long now = System.nanoTime();
            for (var it = siblingChecks.iterator(); it.hasNext(); ) {
                long context = it.next();
                it.remove();
                Long next = nextSiblingCheck.get(context);
                if (next != null && now - next < 0) {
                    continue;
                }
                int found = 0;
                for (Sweepable o : deferredCovers) {
                    if (o.context() == context) {
                        found += sweep(o, true);
                    }
                }
                nextSiblingCheck.put(context, found > 0 ? now : now + SIBLING_NANOS);
            }
        }
    }

    private void settleAll() {
        for (Sweepable o : java.util.List.copyOf(lingering.keySet())) {
            lingering.remove(o);
            try {
                o.settle();
            } catch (RuntimeException | Error t) {
                LOG.log(System.Logger.Level.ERROR, "the CUDA sweeper could not re-cover " + o, t);
            }
        }
    }

    private int sweep(Sweepable o, boolean onlyIfOldestComplete) {
        int n = o.sweep(onlyIfOldestComplete);
        if (n > 0) {
            if (lingerNanos > 0) {
                lingering.put(o, System.nanoTime() + lingerNanos);
            } else {
                o.settle(); // no linger: covered again at once, the next callback sweeps again
            }
        }
        return n;
    }
}
