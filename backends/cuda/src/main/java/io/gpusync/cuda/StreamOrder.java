package io.gpusync.cuda;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The waited-on events of one stream recorded in its order ({@link CudaPointOwner#recordOrderedEvent}), in the order they were
 * recorded. CUDA runs a stream's work in order, so when an event recorded on it is complete, every event recorded
 * on it earlier is complete too. That lets one stream callback and a few probes serve all of the stream's waits:
 *
 * <ul>
 *   <li><b>One cover.</b> A stream callback (through {@link StreamCallbackBudget}, behind the event on a private
 *       stream) stands behind the <em>oldest</em> pending member only; a stream with a thousand waits holds one
 *       callback's room, not a thousand, and leaves the room to other streams' waits.</li>
 *   <li><b>Sweeps.</b> When the cover runs (or the armer's probe finds its event complete), every member up to it
 *       completes at once, and the stream is <em>swept</em> on {@link EventSweeper}'s thread: a binary search by
 *       probe ({@code cuEventQuery}) over the pending members finds the newest complete one — the newest first, so
 *       a burst that finished costs one probe — and every member up to it completes in one pass. A sweep that found
 *       more than its cover reported is repeated, without a rate limit, while completions keep coming
 *       ({@link EventSweeper#LINGER_NANOS}); once they stop, a cover is armed behind the new oldest member.</li>
 * </ul>
 *
 * <p><b>Probes answered by the order.</b> An engine's probe of one event ({@link #probe}) asks the order first: an
 * event at or before the newest one known complete is complete, and an event after one that a probe found incomplete
 * within the last {@link #REUSE_NANOS} ns is taken as incomplete without a driver call (its own event is always queried).
 * A probe that finds its event complete marks every member up to it complete for the next sweep (which the cover
 * before it, now complete too, sets off). A poller that
 * holds a thousand waits of a stream so costs a few {@code cuEventQuery}s a pass, not a thousand.
 *
 * <p>Only events recorded by gpusync on a stream it owns join an order: a stream handle of the user's may be
 * destroyed and its address reused by another stream, and a user's event may be re-recorded elsewhere; such events
 * keep one stream callback each ({@link EventWakeup}).
 *
 * <p><b>Faults and close.</b> A cover is registered under the stream's context and owner: when the context faults or
 * the producer closes, the cover is failed and every member fails with it. A probe that throws fails every member
 * (and, for a fatal error, every registration of the context).
 *
 * <p><b>Threading.</b> Thread-safe. {@link #join} runs on the registering thread (it may arm the cover: driver
 * calls, never blocking for room); a cover's {@code fire} runs on a driver thread and only completes members and
 * hands over; probes run on the sweeper thread only, and a member's hold on its event is dropped only when no
 * sweep can be probing it ({@link #release}), so an event is never released while it is probed.
 */
final class StreamOrder implements EventSweeper.Sweepable {
    /** One waited-on event of the stream. */
    interface Member {
        /** Its place in the stream: later records have larger numbers. */
        long seq();

        /** One non-blocking probe of the event; throws a {@link SyncException} on a driver error. */
        boolean complete();

        /** The event is complete: fire every waiter (any thread, a driver thread included: only hands over). */
        void completed();

        /** The event will never be seen complete: fail every waiter (only hands over). */
        void failed(SyncException error);

        /** Whether anyone still waits on it (a member nobody waits on is dropped at the next sweep). */
        boolean wanted();

        /**
         * The order dropped it because nobody waited ({@link #wanted()} was false); if a waiter came meanwhile, it
         * joins again. Sweeper thread.
         */
        void dropped();

        /** Keeps the event valid until the matching {@link #leave()}. */
        void hold();

        void leave();

        /** Launches the stream callback {@code key} behind the event ({@link StreamCallbacks#launchAfterEvent}). */
        void armBehind(long key);
    }

    private final CudaDriverService service;
    private final MemorySegment context;
    private final OwnerLifetime lifetime; // may be null
    private final AtomicLong seqs = new AtomicLong();
    private final ConcurrentSkipListMap<Long, Member> pending = new ConcurrentSkipListMap<>();
    /** Outstanding covers, by the sequence number they stand behind → registration key. */
    private final ConcurrentSkipListMap<Long, Long> covers = new ConcurrentSkipListMap<>();
    /** The newest sequence number known complete. */
    private final AtomicLong completedUpTo = new AtomicLong();
    /**
     * How long an answer "incomplete" to a probe of one event stands for the events recorded after it: about one
     * {@code cuEventQuery}'s cost, so an answer taken from it is hardly staler than the query's own.
     */
    static final long REUSE_NANOS = 2_000L;
    private final long reuseNanos;
    /** The newest probe's answer "incomplete": the event's seq and when the probe began; null: none. */
    private volatile Incomplete incomplete;
    /** A sweep is probing members of a snapshot: holds of members that leave meanwhile are dropped after it. */
    private volatile boolean probing;
    /** Members that left the order whose hold the sweeper thread still has to drop. */
    private final ConcurrentLinkedQueue<Member> retired = new ConcurrentLinkedQueue<>();
    /** Covers of this order deferred by the budget (no stream callback in flight for them). */
    private final AtomicInteger deferredCovers = new AtomicInteger();
    /** A sweep of this order is queued on the sweeper. */
    final AtomicBoolean queued = new AtomicBoolean();

    StreamOrder(CudaDriverService service, MemorySegment context, OwnerLifetime lifetime) {
        this(service, context, lifetime, REUSE_NANOS);
    }

    /** With how long an answer "incomplete" stands for later events (tests). */
    StreamOrder(CudaDriverService service, MemorySegment context, OwnerLifetime lifetime, long reuseNanos) {
        this.reuseNanos = reuseNanos;
        this.service = service;
        this.context = MemorySegment.ofAddress(context.address());
        this.lifetime = lifetime;
    }

    /** The sequence number of the next event recorded on the stream; call in record order (under the producer's lock). */
    long nextSeq() {
        return seqs.incrementAndGet();
    }

    /** The stream's context address. */
    @Override
    public long context() {
        return context.address();
    }

    /** Members waited on now (tests). */
    int pending() {
        return pending.size();
    }

    @Override
    public boolean idle() {
        return pending.isEmpty();
    }

    /** Covers outstanding now (tests). */
    int covers() {
        return covers.size();
    }

    /** Whether a cover of this order waits for room in the budget (its stream has no callback in flight). */
    boolean coverDeferred() {
        return deferredCovers.get() > 0;
    }

    /**
     * {@code m} is waited on: joins the order and makes sure a cover stands at or before the oldest member. If arming
     * the cover throws, {@code m} is out of the order again and the exception propagates; members already waiting
     * fail with it (a driver error), since no cover would wake them.
     */
    void join(Member m) {
        m.hold();
        pending.put(m.seq(), m);
        if (m.seq() <= completedUpTo.get()) { // a sweep passed it meanwhile
            completeUpTo(completedUpTo.get());
            return;
        }
        if (lifetime != null && lifetime.ended()) {
            failAll(lifetime.cancelled());
            return;
        }
        try {
            ensureCover();
        } catch (RuntimeException | Error e) {
            if (pending.remove(m.seq(), m)) {
                release(m);
            }
            if (e instanceof SyncException se) {
                failAll(se); // no cover could be armed: nothing would wake the members already waiting
            }
            throw e;
        }
    }

    /**
     * Arms a cover behind the oldest member unless one stands at or before it already. A member whose event can no
     * longer be held (its point was closed while a wait on it was pending) is passed over for the next: a cover
     * behind a later event of the stream runs after the earlier ones completed.
     */
    synchronized void ensureCover() {
        Map.Entry<Long, Long> first = covers.firstEntry();
        for (Map.Entry<Long, Member> oldest : pending.entrySet()) {
            if (first != null && first.getKey() <= oldest.getKey()) {
                return; // it runs no later than the oldest member completes (stream order)
            }
            long seq = oldest.getKey();
            long key = service.callbacks().register(context, lifetime, new Cover(seq));
            covers.put(seq, key);
            try {
                service.budget().arm(new CoverArm(key, oldest.getValue()));
                return;
            } catch (IllegalStateException closed) { // the deferred arm could not hold the member's event
                covers.remove(seq, key);
                service.callbacks().cancel(key);
            } catch (RuntimeException | Error e) {
                covers.remove(seq, key);
                service.callbacks().cancel(key);
                throw e;
            }
        }
    }

    /**
     * Every member up to {@code seq} is complete: completes them (whoever removes a member from the order owns its
     * outcome) and withdraws the covers they made redundant. Lock-free; runs on driver threads too.
     */
    int completeUpTo(long seq) {
        completedUpTo.accumulateAndGet(seq, Math::max);
        int n = 0;
        for (Map.Entry<Long, Member> e : pending.headMap(seq, true).entrySet()) {
            if (pending.remove(e.getKey(), e.getValue())) {
                n++;
                try {
                    e.getValue().completed();
                } catch (RuntimeException | Error t) { // one throwing waiter must not strand the others
                    System.getLogger(StreamOrder.class.getName()).log(System.Logger.Level.WARNING,
                            "completing a CUDA event wait threw", t);
                }
                release(e.getValue());
            }
        }
        for (Map.Entry<Long, Long> c : covers.headMap(seq, true).entrySet()) {
            if (covers.remove(c.getKey(), c.getValue())) {
                service.callbacks().cancel(c.getValue()); // launched: runs into nothing; deferred: dropped
            }
        }
        return n;
    }

    /** Fails every member with {@code error} (a fault of the context, the producer's close, a failed probe). */
    void failAll(SyncException error) {
        for (Map.Entry<Long, Member> e : pending.entrySet()) {
            if (pending.remove(e.getKey(), e.getValue())) {
                try {
                    e.getValue().failed(error);
                } catch (RuntimeException | Error t) {
                    System.getLogger(StreamOrder.class.getName()).log(System.Logger.Level.WARNING,
                            "failing a CUDA event wait threw", t);
                }
                release(e.getValue());
            }
        }
        for (Map.Entry<Long, Long> c : covers.entrySet()) {
            if (covers.remove(c.getKey(), c.getValue())) {
                service.callbacks().cancel(c.getValue());
            }
        }
    }

    /**
     * An engine's probe of {@code m}'s event (the caller holds it): answered by the order where stream order decides
     * it, else by one {@link Member#complete()}. A complete event newer than any known marks every member up to it
     * complete; the next sweep completes them on the sweeper's thread (not the prober's), asked for here unless a
     * launched cover stands before the event. Any thread; never blocks.
     */
    boolean probe(Member m) {
        long seq = m.seq();
        long done = completedUpTo.get();
        if (seq <= done) {
            return true;
        }
        Incomplete last = incomplete;
        long now = System.nanoTime();
        if (last != null && seq > last.seq && last.seq > done && now - last.at < reuseNanos) {
            return false; // an earlier event of the stream was incomplete a moment ago
        }
        if (!m.complete()) {
            incomplete = new Incomplete(seq, now);
            return false;
        }
        if (completedUpTo.getAndAccumulate(seq, Math::max) < seq && uncovered(seq)) {
            service.sweeper().request(this, false); // the sweeper completes the members up to it, and finds later ones
        }
        return true;
    }

    /**
     * Whether members up to {@code seq} wait and no launched cover would complete them: none stands at or before
     * {@code seq}, or one of this order's covers is deferred (the budget's armer probes it at its own pace). A
     * launched cover there runs now that its event is complete, and its sweep completes up to {@code seq}.
     */
    private boolean uncovered(long seq) {
        Map.Entry<Long, Member> oldest = pending.firstEntry();
        if (oldest == null || oldest.getKey() > seq) {
            return false;
        }
        Map.Entry<Long, Long> cover = covers.firstEntry();
        return cover == null || cover.getKey() > seq || deferredCovers.get() > 0;
    }

    private record Incomplete(long seq, long at) {
    }

    /**
     * {@code m} left the order: its hold on its event is dropped now, or — while a sweep may be probing it — by the
     * sweeper once its probes are done. (The removal from {@link #pending} comes first and {@link #probing} is read
     * after it, while a sweep sets the flag before it takes its snapshot: one of the two sees the other.)
     */
    private void release(Member m) {
        if (probing) {
            retired.add(m);
            service.sweeper().request(this, false);
        } else {
            m.leave();
        }
    }

    /** Drops the holds of members that left the order. Sweeper thread only (never during a probe). */
    void dropRetired() {
        for (Member m; (m = retired.poll()) != null; ) {
            m.leave();
        }
    }

    /**
     * One sweep (sweeper thread only): drops members nobody waits on, finds the newest complete member by binary
     * search over the rest and completes every member up to it, then re-covers the oldest left.
     *
     * @param onlyIfOldestComplete probe the oldest member first and stop there if it is not complete (one probe: a
     *                             sibling's check of a stream whose cover has no callback in flight)
     * @return how many members it completed
     */
    @Override
    public int sweep(boolean onlyIfOldestComplete) {
        for (Map.Entry<Long, Member> e : pending.entrySet()) {
            if (!e.getValue().wanted() && pending.remove(e.getKey(), e.getValue())) {
                try {
                    e.getValue().dropped(); // first: a waiter that came meanwhile rejoins with a hold of its own
                } catch (RuntimeException ignored) {
                    // a rejoin that failed has failed its waiters
                } finally {
                    e.getValue().leave(); // not probing now: no snapshot holds it
                }
            }
        }
        int done;
        Member[] ms;
        long known = completedUpTo.get(); // an engine's probe may have marked more ({@link #probe})
        probing = true;
        try {
            ms = pending.values().toArray(new Member[0]);
            if (ms.length == 0) {
                return 0;
            }
            done = newestComplete(ms, onlyIfOldestComplete);
        } catch (SyncException e) {
            probing = false;
            if (e.kind() == io.gpusync.ErrorKind.FATAL && !(e instanceof SyncCancelledException)) {
                service.callbacks().failContext(context.address(), e); // sticky: every wait of the context
            }
            failAll(e);
            return 0;
        } finally {
            probing = false;
        }
        long upTo = Math.max(done >= 0 ? ms[done].seq() : 0, known);
        int n = upTo > 0 ? completeUpTo(upTo) : 0;
        if (n == 0) {
            settle();
        }
        return n; // completions: the sweeper sweeps again, and covers the rest once it stops (settle)
    }

    /**
     * The sweeper stops sweeping this order for now: a cover must stand behind the oldest member left (not armed
     * while the sweeper lingers, which would arm a callback per sweep of a burst). Sweeper thread.
     */
    @Override
    public void settle() {
        try {
            ensureCover();
        } catch (SyncException e) {
            failAll(e); // nothing would wake the members left
        }
    }

    /** The index of the newest complete member of {@code ms} (in seq order), or -1; probes O(log n) of them. */
    static int newestComplete(Member[] ms, boolean oldestFirst) {
        int lo = -1;           // known complete
        int hi = ms.length;    // known incomplete
        if (oldestFirst) {
            if (!ms[0].complete()) {
                return -1;
            }
            lo = 0;
        }
        if (lo < ms.length - 1) {
            if (ms[ms.length - 1].complete()) {
                return ms.length - 1;
            }
            hi = ms.length - 1;
        }
        while (hi - lo > 1) {
            int mid = (lo + hi) >>> 1;
            if (ms[mid].complete()) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The stream callback behind one member: completes every member up to it, then asks for a sweep. */
    private final class Cover implements StreamCallbacks.Slot {
        private final long seq;

        Cover(long seq) {
            this.seq = seq;
        }

        @Override
        public void fire() {
            covers.remove(seq);
            completeUpTo(seq);
            if (!pending.isEmpty() || !retired.isEmpty()) {
                service.sweeper().request(StreamOrder.this, true);
            } else {
                service.sweeper().callbackRan(context.address()); // nothing left here: only deferred siblings, if any
            }
        }

        @Override
        public void fail(SyncException error) {
            covers.remove(seq);
            failAll(error);
        }
    }

    /** The arm of a cover: now, or once the budget has room (probed meanwhile by the armer). */
    private final class CoverArm extends StreamCallbackBudget.Entry {
        private final Member behind;

        CoverArm(long key, Member behind) {
            super(key, context);
            this.behind = behind;
        }

        @Override
        public boolean arm(boolean held) {
            if (held) { // the deferral's hold keeps the event alive through the call
                behind.armBehind(key());
                return true;
            }
            // armed at once: another thread's sweep or cover may complete the member now and drop its hold, and its
            // point may then be closed and the event destroyed: the call needs a hold of its own (ISE if it is gone)
            behind.hold();
            try {
                behind.armBehind(key());
            } finally {
                behind.leave();
            }
            return true;
        }

        @Override
        public boolean complete() {
            return behind.complete();
        }

        @Override
        public boolean probeQueriesContext() {
            return true;
        }

        @Override
        public void hold() {
            behind.hold();
            if (deferredCovers.getAndIncrement() == 0) {
                service.sweeper().deferred(StreamOrder.this, true);
            }
        }

        @Override
        public void leave() {
            if (deferredCovers.decrementAndGet() == 0) {
                service.sweeper().deferred(StreamOrder.this, false);
            }
            behind.leave();
        }
    }
}
