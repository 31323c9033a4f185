package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.SignalListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The shared state of one {@link CudaHostTimeline}: the pinned word, the GPU-side bookkeeping (guarded by
 * {@code this}; only ever taken on application threads, never inside a stream callback) and the lock-free
 * completion side that stream callbacks drive. Holds no reference to any waiter or to the timeline object, so
 * the anchor's release action may capture it.
 */
@SuppressWarnings("try") // the pushed-context resource is used for its scope only
final class TimelineState implements EventSweeper.Sweepable {
    private static final System.Logger LOG = System.getLogger(TimelineState.class.getName());
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    static final long HEALTH_CHECK_INTERVAL_NANOS = 1_000_000L;

    final MemorySegment word;      // 8 bytes of pinned, device-mapped host memory (from the pool)
    final long devicePointer;
    final MemorySegment context;
    final int device;
    private final PinnedWordPool pool;
    private final CudaDriverService service;
    private final Runnable afterRelease;

    // GPU-side bookkeeping, guarded by this
    private long lastAdvanced;
    private MemorySegment lastStream;
    private boolean advancedOnce;
    private long covered;          // highest value a launched stream callback covers
    private MemorySegment orderEvent = MemorySegment.NULL;
    /**
     * Marks: an event recorded right after each of the last {@value #MARKS} writes, so that a stream callback
     * armed later for a value can wait for that value's own position in its stream — not for everything
     * enqueued since (a re-recorded event does not disturb waits already enqueued on its earlier record).
     */
    private static final int MARKS = 64;
    private final long[] markValue = new long[MARKS];
    private final MemorySegment[] markEvent = new MemorySegment[MARKS];

    // completion side: lock-free
    private final AtomicLong notified = new AtomicLong();   // highest value a stream callback reported (unsigned max)
    private final ConcurrentSkipListMap<TimelineListener, Boolean> listeners =
            new ConcurrentSkipListMap<>(TimelineListener.ORDER);
    private final AtomicLong nodeSeq = new AtomicLong();
    final Set<Long> outstandingKeys = ConcurrentHashMap.newKeySet();
    private volatile long nextHealthCheck = System.nanoTime();
    /** A value the word has had: a probe at or below it skips the read, which the GPU's writes make a cache miss. */
    private volatile long seen;
    private volatile SyncException failure;
    /** Set (under the lock) once the release has begun: the events and the word are no longer this state's. */
    private volatile boolean released;
    /** Covers of this timeline deferred by the budget: while any is, the sweeper reads the word when a callback of the context runs. */
    private final AtomicInteger deferredCovers = new AtomicInteger();

    TimelineState(CudaDriverService service, MemorySegment word, long devicePointer, MemorySegment context,
                  int device, PinnedWordPool pool, Runnable afterRelease) {
        this.service = service;
        this.word = word;
        this.devicePointer = devicePointer;
        this.context = context;
        this.device = device;
        this.pool = pool;
        this.afterRelease = afterRelease;
    }

    /** The word, read with acquire semantics (≈1 ns). */
    long read() {
        return (long) WORD.getAcquire(word, 0L);
    }

    synchronized long lastAdvanced() {
        return lastAdvanced;
    }

    /**
     * Whether {@code target} (unsigned) has been written. Not yet: at most once per millisecond, a health check
     * of the context ({@code cuStreamQuery} on its legacy stream, context pushed) unless a query in the context
     * succeeded within that millisecond, so a sticky error surfaces as {@link io.gpusync.DeviceLostException}
     * instead of {@code false} forever (within two milliseconds).
     */
    boolean reached(long target) {
        if (Long.compareUnsigned(seen, target) >= 0 || readReaches(target)) {
            return true;
        }
        SyncException f = failure;
        if (f != null) {
            throw f;
        }
        long now = System.nanoTime();
        long due = nextHealthCheck;
        if (now - due >= 0) {
            nextHealthCheck = now + HEALTH_CHECK_INTERVAL_NANOS;
            // one check a context per interval: another timeline's (or the fault watch's) success vouches for this one
            if (!service.faultWatch().vouchedWithin(context.address(), now, HEALTH_CHECK_INTERVAL_NANOS)) {
                checkHealth();
                service.faultWatch().vouch(context.address());
            }
            return readReaches(target);
        }
        return false;
    }

    /** Reads the word; remembers a value higher than {@link #seen} (a lost race only leaves a lower value). */
    private boolean readReaches(long target) {
        long value = read();
        if (Long.compareUnsigned(value, seen) > 0) {
            seen = value;
        }
        return Long.compareUnsigned(value, target) >= 0;
    }

    /**
     * {@code cuStreamQuery(NULL)} with the context pushed. A fatal result — a sticky error, or the context gone
     * ({@code CUDA_ERROR_INVALID_CONTEXT} for this held context counts as gone) — is remembered: every later probe
     * throws it at once and every listener fails. Other errors (transient, say) are thrown without being
     * remembered, so the next check may pass.
     */
    private void checkHealth() {
        service.ensureDriver();
        try {
            int r;
            try (CudaDriver.Pushed ignored = CudaDriver.Pushed.pushHeld(context, "timeline health check")) {
                r = Cuda.cuStreamQuery(MemorySegment.NULL);
            }
            if (CudaResults.isFatal(r) || r == CudaResults.INVALID_CONTEXT) {
                throw CudaResults.contextGone(r, "CudaHostTimeline health check (cuStreamQuery) of context "
                        + CudaDriver.hex(context));
            }
        } catch (SyncException e) {
            if (e.kind() == io.gpusync.ErrorKind.FATAL) {
                fail(e);
            }
            throw e;
        }
    }

    /**
     * Fails the timeline for good: every pending listener fails with {@code error} (the first failure wins for
     * later probes), every outstanding stream callback is withdrawn. Used for a faulted context (by the fault watch
     * through a cover, or a health check) and for the close of an owned producer.
     */
    void fail(SyncException error) {
        if (failure == null) {
            failure = error;
        }
        for (Long key : outstandingKeys) {
            if (service.callbacks().cancel(key)) {
                outstandingKeys.remove(key);
            }
        }
        failAll(failure);
    }

    // ---- the sweeper's side: a deferred cover's timeline is read when another callback of the context runs ----

    @Override
    public long context() {
        return context.address();
    }

    /** Completes every listener the word has reached (reading the word costs ≈ 1 ns). Sweeper thread. */
    @Override
    public int sweep(boolean onlyIfOldestComplete) {
        if (released || listeners.isEmpty()) {
            return 0;
        }
        return completeUpTo(read()); // every value up to the word's has been written
    }

    @Override
    public boolean idle() {
        return released || listeners.isEmpty();
    }

    // ---- GPU side (application threads) ----

    /** Enqueues the write of the next value on {@code stream}; optionally a stream callback right after it. */
    synchronized long advance(MemorySegment stream, boolean streamCallback) {
        if (lastAdvanced == -1L) {
            throw new SyncInvalidArgumentException(BackendKind.CUDA, "CudaHostTimeline is exhausted (2^64 - 1)");
        }
        SyncException f = failure;
        if (f != null) {
            throw f;
        }
        try {
            return advanceLocked(stream, streamCallback);
        } catch (SyncException e) {
            if (e.kind() == io.gpusync.ErrorKind.FATAL) {
                fail(e); // listeners for values this advance would have written must not wait forever
            }
            throw e;
        }
    }

    private long advanceLocked(MemorySegment stream, boolean streamCallback) {
        long next = lastAdvanced + 1;
        MemorySegment s = MemorySegment.ofAddress(stream.address());
        try (CudaDriver.Pushed ignored = CudaDriver.Pushed.pushHeld(context, "CudaHostTimeline.advance")) {
            if (advancedOnce && s.address() != lastStream.address()) {
                orderAfterPrevious(s);
            }
            CudaResults.check(Cuda.cuStreamWriteValue64_v2(s, devicePointer, next, Cuda.CU_STREAM_WRITE_VALUE_DEFAULT()),
                    "cuStreamWriteValue64_v2(stream " + CudaDriver.hex(s) + ", timeline word, "
                            + Long.toUnsignedString(next) + ")");
            lastAdvanced = next;
            lastStream = s;
            advancedOnce = true;
            mark(s, next);
            if (streamCallback || hasListenersAbove(covered)) {
                try {
                    launchCover(s, next);
                } catch (SyncException e) {
                    if (e.kind() == io.gpusync.ErrorKind.FATAL) {
                        throw e;
                    }
                    LOG.log(System.Logger.Level.DEBUG, "no stream callback after timeline value " + next, e);
                }
            }
        }
        return next;
    }

    /** Orders {@code stream} after everything enqueued on the previous stream (so values stay monotonic). */
    private void orderAfterPrevious(MemorySegment stream) {
        if (orderEvent.equals(MemorySegment.NULL)) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
                CudaResults.check(Cuda.cuEventCreate(p, Cuda.CU_EVENT_DISABLE_TIMING()),
                        "cuEventCreate for CudaHostTimeline stream ordering");
                orderEvent = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
            }
        }
        CudaResults.check(Cuda.cuEventRecord(orderEvent, lastStream),
                "cuEventRecord(previous timeline stream " + CudaDriver.hex(lastStream) + ")");
        CudaResults.check(Cuda.cuStreamWaitEvent(stream, orderEvent, 0),
                "cuStreamWaitEvent(new timeline stream " + CudaDriver.hex(stream) + ")");
    }

    /** Records the mark of {@code value} on {@code stream}; caller holds the lock + context. Best effort. */
    private void mark(MemorySegment stream, long value) {
        int slot = (int) Long.remainderUnsigned(value, MARKS);
        try {
            if (markEvent[slot] == null) {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
                    CudaResults.check(Cuda.cuEventCreate(p, Cuda.CU_EVENT_DISABLE_TIMING()), "cuEventCreate (timeline mark)");
                    markEvent[slot] = MemorySegment.ofAddress(p.get(ValueLayout.ADDRESS, 0).address());
                }
            }
            CudaResults.check(Cuda.cuEventRecord(markEvent[slot], stream), "cuEventRecord (timeline mark)");
            markValue[slot] = value;
        } catch (SyncException e) {
            if (e.kind() == io.gpusync.ErrorKind.FATAL) {
                throw e;
            }
            markValue[slot] = 0; // no usable mark: covering this value falls back to the stream's end
        }
    }

    /** The mark of the smallest recent value ≥ {@code target}, or -1; caller holds the lock. */
    private int markAtOrAbove(long target) {
        int best = -1;
        for (int i = 0; i < MARKS; i++) {
            long v = markValue[i];
            if (markEvent[i] != null && v != 0 && Long.compareUnsigned(v, target) >= 0
                    && Long.compareUnsigned(v, lastAdvanced) <= 0
                    && (best < 0 || Long.compareUnsigned(v, markValue[best]) < 0)) {
                best = i;
            }
        }
        return best;
    }

    /** Launches a stream callback on {@code stream} that reports {@code value}; caller holds the lock + context. */
    private void launchCover(MemorySegment stream, long value) {
        Cover cover = new Cover(this, value);
        long key = cover.register();
        int r = service.callbacks().launch(stream, key);
        if (r != CudaResults.SUCCESS) {
            cover.unregister();
            throw CudaResults.exception(r, "cuStreamAddCallback(timeline stream " + CudaDriver.hex(stream) + ")");
        }
        if (Long.compareUnsigned(value, covered) > 0) {
            covered = value;
        }
    }

    /**
     * Makes sure a stream callback will report a value ≥ {@code target} once it is written. Values already
     * advanced but not covered get one now, behind an event recorded on the last stream and a private stream
     * (the user's stream never waits for it); values not advanced yet are covered by the advance that writes
     * them (it sees the pending listener).
     */
    synchronized void ensureCovered(long target) {
        if (Long.compareUnsigned(covered, target) >= 0 || Long.compareUnsigned(target, lastAdvanced) > 0
                || !advancedOnce) {
            return;
        }
        int mark = markAtOrAbove(target);
        // the value's own position in its stream (later work does not delay the report), else the stream's end
        long value = mark >= 0 ? markValue[mark] : lastAdvanced;
        Cover cover = new Cover(this, value);
        long key = cover.register();
        try {
            service.budget().arm(new CoverArm(value, key));
        } catch (RuntimeException e) {
            cover.unregister();
            throw e;
        }
        if (Long.compareUnsigned(value, covered) > 0) {
            covered = value;
        }
    }

    /**
     * The arm of a cover for an advanced value, behind the value's mark or, without one, an event recorded on the
     * last stream now; at once, or later when the driver has room ({@link StreamCallbackBudget}). Probed meanwhile
     * by reading the word.
     */
    private final class CoverArm extends StreamCallbackBudget.Entry {
        private final long value;

        CoverArm(long value, long key) {
            super(key, context);
            this.value = value;
        }

        @Override
        public boolean arm(boolean held) { // holds nothing: the timeline's own lock and released flag guard it
            synchronized (TimelineState.this) {
                if (released) {
                    return false;
                }
                try (CudaDriver.Pushed ignored = CudaDriver.Pushed.pushHeld(context, "covering a timeline value")) {
                    int mark = markAtOrAbove(value);
                    if (mark >= 0) {
                        service.callbacks().launchAfterEvent(MemorySegment.NULL, markEvent[mark], key());
                        return true;
                    }
                    try (Arena arena = Arena.ofConfined()) {
                        MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
                        CudaResults.check(Cuda.cuEventCreate(p, Cuda.CU_EVENT_DISABLE_TIMING()),
                                "cuEventCreate (timeline cover)");
                        MemorySegment ev = p.get(ValueLayout.ADDRESS, 0);
                        try {
                            CudaResults.check(Cuda.cuEventRecord(ev, lastStream),
                                    "cuEventRecord(timeline stream " + CudaDriver.hex(lastStream) + ")");
                            service.callbacks().launchAfterEvent(MemorySegment.NULL, ev, key());
                        } finally {
                            CudaDriver.logRelease(Cuda.cuEventDestroy_v2(ev), "cuEventDestroy_v2 (timeline cover)");
                        }
                    }
                    return true;
                }
            }
        }

        @Override
        public boolean complete() {
            // the word stays mapped while its timeline is not released (the pool frees slabs only with the context)
            return !released && Long.compareUnsigned(read(), value) >= 0;
        }

        @Override
        public void hold() {
            if (deferredCovers.getAndIncrement() == 0) {
                service.sweeper().deferred(TimelineState.this, true);
            }
        }

        @Override
        public void leave() {
            if (deferredCovers.decrementAndGet() == 0) {
                service.sweeper().deferred(TimelineState.this, false);
            }
        }
    }

    private boolean hasListenersAbove(long value) {
        if (listeners.isEmpty()) {
            return false;
        }
        try {
            return Long.compareUnsigned(listeners.lastKey().target, value) > 0;
        } catch (java.util.NoSuchElementException raced) {
            return false;
        }
    }

    // ---- completion side (any thread, including stream callbacks) ----

    /** A stream callback reported {@code value}: completes every listener at or below it. Lock-free. */
    void reportReached(long value) {
        long prev;
        do {
            prev = notified.get();
            if (Long.compareUnsigned(prev, value) >= 0) {
                break;
            }
        } while (!notified.compareAndSet(prev, value));
        completeUpTo(notified.get());
    }

    private int completeUpTo(long value) {
        int n = 0;
        TimelineListener last = new TimelineListener(value, Long.MAX_VALUE, null);
        for (TimelineListener node : listeners.headMap(last, true).keySet()) {
            try {
                if (node.complete(null)) {
                    n++;
                }
            } catch (RuntimeException | Error t) { // one throwing listener must not strand the others
                LOG.log(System.Logger.Level.WARNING, "a CUDA timeline listener threw", t);
            }
        }
        return n;
    }

    private void failAll(SyncException e) {
        for (TimelineListener n : listeners.keySet()) {
            try {
                n.complete(e);
            } catch (RuntimeException | Error t) { // one listener must not keep the others pending
                LOG.log(System.Logger.Level.WARNING, "a CUDA timeline listener threw while failing", t);
            }
        }
    }

    /** Registers {@code listener} for {@code target}; the caller has checked it is not reached yet. */
    TimelineListener addListener(long target, SignalListener listener, NativeAnchor.Claim claim) {
        TimelineListener node = new TimelineListener(target, nodeSeq.incrementAndGet(), this);
        node.listener = listener;
        node.claim = claim;
        listeners.put(node, Boolean.TRUE);
        return node;
    }

    /** After registering: if the target was reached meanwhile, complete now (the race with reportReached). */
    void recheck(TimelineListener node) {
        long n = notified.get();
        if (Long.compareUnsigned(n, node.target) >= 0 || Long.compareUnsigned(read(), node.target) >= 0) {
            node.complete(null);
        }
        SyncException f = failure;
        if (f != null) {
            node.complete(f);
        }
    }

    /** Drops every listener without calling it (release). */
    void clearListeners() {
        listeners.clear();
    }

    /** Removes {@code node}; true for the one caller that removed it (and so completes or cancels it). */
    boolean removeListener(TimelineListener node) {
        return listeners.remove(node) != null;
    }

    /** The stream callback's slot: reports a written value. Holds the state, never a waiter. */
    private static final class Cover implements StreamCallbacks.Slot {
        private final TimelineState state;
        private final long value;
        private volatile long key;

        Cover(TimelineState state, long value) {
            this.state = state;
            this.value = value;
        }

        /** Registers this cover with the hub and the state's outstanding keys; returns the key. */
        long register() {
            long k = state.service.callbacks().register(state.context, null, this);
            key = k;
            state.outstandingKeys.add(k);
            return k;
        }

        void unregister() {
            state.service.callbacks().cancel(key);
            state.outstandingKeys.remove(key);
        }

        @Override
        public void fire() {
            state.outstandingKeys.remove(key);
            state.reportReached(value);
            state.service.sweeper().callbackRan(state.context.address()); // deferred covers of the context, if any
        }

        @Override
        public void fail(SyncException error) {
            state.outstandingKeys.remove(key);
            state.fail(error);
        }
    }

    // ---- release ----

    /** The anchor's release action: captures this state only. */
    Runnable releaseAction() {
        return this::release; // NativeAnchor moves it off a driver thread or the Cleaner
    }

    /**
     * Releases the timeline's native objects. Driver calls: {@code cuEventDestroy_v2} of the order and mark events
     * (context pushed and popped; skipped if the push fails), nothing else — the word goes back to the pool (a
     * memory write), or to the reaper while a write to it is still in flight, or is abandoned if its context died
     * first. No call here synchronizes with the device.
     */
    private void release() {
        for (Long key : outstandingKeys) {
            service.callbacks().cancel(key);
        }
        outstandingKeys.clear();
        clearListeners();
        MemorySegment ev;
        MemorySegment[] marks;
        long last;
        synchronized (this) {
            released = true; // deferred cover arms find nothing to arm, and stop reading the word
            ev = orderEvent;
            orderEvent = MemorySegment.NULL;
            marks = markEvent.clone();
            java.util.Arrays.fill(markEvent, null);
            last = lastAdvanced;
        }
        try {
            if (!ev.equals(MemorySegment.NULL)) {
                CudaEventSyncWaiter.destroyEvent(ev, context);
            }
            for (MemorySegment m : marks) {
                if (m != null) {
                    CudaEventSyncWaiter.destroyEvent(m, context); // a stream already waiting on it is unaffected
                }
            }
            SyncException f = failure;
            if (Long.compareUnsigned(read(), last) >= 0) {
                pool.give(word);
            } else if (f != null && f.kind() == io.gpusync.ErrorKind.FATAL) {
                // the context died with a write to the word pending: it may never land, or land late; never reuse
                LOG.log(System.Logger.Level.DEBUG, "timeline word " + CudaDriver.hex(word)
                        + " abandoned: its context failed with a write pending");
            } else {
                // a cuStreamWriteValue64 to the word is still pending: reusing it now would let that write land in
                // another timeline. The reaper returns it to the pool once it is written.
                service.reaper().bury(word, pool, last);
            }
        } finally {
            if (afterRelease != null) {
                afterRelease.run();
            }
        }
    }
}
