package io.gpusync.reactor;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Operators;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

import java.time.Duration;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Function;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * {@link SyncEngine#awaitEach} and {@link SyncEngine#awaitEachUnordered}: waits on the point of every item of
 * the source, at most {@code maxInFlight} at once, and emits each item once its point is signalled — in source
 * order, or in completion order.
 *
 * <p><b>Demand.</b> The operator requests from upstream only what downstream has asked for, and never more than
 * {@code maxInFlight} items beyond what it has emitted: at every moment, items received and not yet emitted
 * ≤ {@code min(maxInFlight, downstream demand not yet served)}. With no demand, nothing is requested. So work
 * submitted upstream ({@code map(this::submit)}) is bounded by downstream backpressure.
 *
 * <p><b>Waits.</b> Each item's wait is an ordinary engine wait ({@link PendingWait}, the path its waiter
 * allows, the engine's timeout timer) started in {@code onNext}; the first wait to fail or time out fails the
 * Flux with a {@link SyncException} of the same type naming the item's point, and cancels every other wait and
 * upstream. Cancelling the Flux cancels upstream and every wait in flight, at once, on the cancelling thread.
 *
 * <p><b>Machinery.</b> No lock and no thread: a work-in-progress counter serialises the drain loop (the one
 * place that emits, requests upstream and frees slots), as in reactor-core's {@code FluxMergeSequential}. Items
 * in flight sit in a slot array of {@code maxInFlight} (rounded up to a power of two) entries: in source order
 * (slot = sequence number mod capacity) for the ordered operator; for the unordered one, in slots taken from
 * a single-producer, single-consumer ring of free indices, completed items passing through a multi-producer
 * queue.
 *
 * <p>Scannable as the step {@code gpusync.awaitEach} or {@code gpusync.awaitEachUnordered} ({@code PREFETCH}: the
 * most items in flight); its subscription answers as reactor-core's operators do, with the items in flight as inners.
 */
final class FluxAwaitEach<T> extends FluxOperator<T, T> {
    private final SyncEngine engine;
    private final Function<? super T, ? extends SyncPoint> pointOf;
    private final int maxInFlight;
    private final Duration timeout;
    private final boolean ordered;

    FluxAwaitEach(Flux<? extends T> source, SyncEngine engine, Function<? super T, ? extends SyncPoint> pointOf,
                  int maxInFlight, Duration timeout, boolean ordered) {
        super(source);
        this.engine = engine;
        this.pointOf = pointOf;
        this.maxInFlight = maxInFlight;
        this.timeout = timeout;
        this.ordered = ordered;
    }

    /** {@link SyncEngine#awaitEach}'s operator: checks the arguments at assembly, as Reactor's operators do. */
    static <T> Function<Flux<T>, Flux<T>> operator(SyncEngine engine, Function<? super T, ? extends SyncPoint> pointOf,
                                                   int maxInFlight, Duration timeout, boolean ordered) {
        Objects.requireNonNull(pointOf, "pointOf");
        if (maxInFlight < 1 || maxInFlight > SyncEngine.MAX_IN_FLIGHT) {
            throw new IllegalArgumentException("maxInFlight must be from 1 to " + SyncEngine.MAX_IN_FLIGHT + ": "
                    + maxInFlight);
        }
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            return flux -> WaitArguments.<T>invalidTimeout(timeout).flux();
        }
        return flux -> of(flux, engine, pointOf, maxInFlight, timeout, ordered);
    }

    /** The stage over {@code source}, passed through Reactor's assembly hooks as reactor-core's operators are. */
    static <T> Flux<T> of(Flux<? extends T> source, SyncEngine engine, Function<? super T, ? extends SyncPoint> pointOf,
                          int maxInFlight, Duration timeout, boolean ordered) {
        return onAssembly(new FluxAwaitEach<>(source, engine, pointOf, maxInFlight, timeout, ordered));
    }

    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.PREFETCH) {
            return maxInFlight;
        }
        return key == Attr.RUN_STYLE ? Attr.RunStyle.ASYNC : super.scanUnsafe(key);
    }

    @Override
    public String stepName() {
        return ordered ? "gpusync.awaitEach" : "gpusync.awaitEachUnordered";
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        source.subscribe(new Pipeline<>(actual, engine, pointOf, maxInFlight, timeout, ordered));
    }

    /**
     * The failure of the wait on the item numbered {@code index} (from 0), as a {@link SyncException} of the same
     * type (and kind, and backend) whose message names the item's point.
     */
    static SyncException failureOf(Throwable error, long index, SyncPoint point) {
        String where = "awaitEach: item " + index + " (" + point + "): ";
        if (!(error instanceof SyncException se)) {
            return new SyncException(ErrorKind.FATAL, point.backend(), where + error, error);
        }
        BackendKind backend = se.backend().orElse(null);
        String message = where + se.getMessage();
        SyncException typed = switch (se) {
            case SyncTimeoutException t -> new SyncTimeoutException(backend, message);
            case SyncCancelledException c -> new SyncCancelledException(message);
            case DeviceLostException d -> new DeviceLostException(backend, message, d);
            case SyncNotSupportedException n -> new SyncNotSupportedException(backend, message, n);
            case SyncInvalidArgumentException i -> new SyncInvalidArgumentException(backend, message);
            case SyncBackendException n when backend != null -> new SyncBackendException(n.kind(), backend,
                    n.nativeCode(), n.nativeCodeName(), where + stripCode(n));
            default -> new SyncException(se.kind(), backend, message, se);
        };
        if (typed.getCause() == null) {
            typed.addSuppressed(se); // the original, with its stack
        }
        return typed;
    }

    private static String stripCode(SyncBackendException e) {
        String m = String.valueOf(e.getMessage());
        String suffix = " (" + e.nativeCodeName() + " = " + e.nativeCode() + ")";
        return m.endsWith(suffix) ? m.substring(0, m.length() - suffix.length()) : m;
    }

    /** One subscription: the subscriber of the source, the subscription of downstream, the drain loop. */
    static final class Pipeline<T> implements CoreSubscriber<T>, Subscription, Scannable {
        @SuppressWarnings("rawtypes")
        private static final AtomicIntegerFieldUpdater<Pipeline> WIP =
                AtomicIntegerFieldUpdater.newUpdater(Pipeline.class, "wip");
        @SuppressWarnings("rawtypes")
        private static final AtomicLongFieldUpdater<Pipeline> REQUESTED =
                AtomicLongFieldUpdater.newUpdater(Pipeline.class, "requested");
        @SuppressWarnings("rawtypes")
        private static final AtomicReferenceFieldUpdater<Pipeline, Throwable> ERROR =
                AtomicReferenceFieldUpdater.newUpdater(Pipeline.class, Throwable.class, "error");

        final CoreSubscriber<? super T> actual;
        private final SyncEngine engine;
        private final Function<? super T, ? extends SyncPoint> pointOf;
        private final int maxInFlight;
        private final Duration timeout;
        private final boolean ordered;
        /** Items in flight: received, not yet emitted. */
        private final AtomicReferenceArray<Item<T>> slots;
        private final int mask;
        /** Unordered: indices of free slots (produced by the drain loop, consumed by {@code onNext}). */
        private final FreeSlots free;
        /** Unordered: items whose point has been signalled, in completion order. */
        private final Queue<Item<T>> completed;

        private Subscription upstream;
        /** Items received from upstream (written by {@code onNext} only). */
        private volatile long received;
        /** Set by {@code onComplete}, after the last {@code onNext}. */
        private volatile boolean upstreamDone;
        private volatile boolean cancelled;
        private volatile Throwable error;
        private volatile long requested;
        private volatile int wip;

        // owned by the drain loop
        private long emitted;
        private long requestedUpstream;
        /** Downstream has been signalled (or the pipeline cancelled); volatile for {@link #scanUnsafe} only. */
        private volatile boolean terminated;

        Pipeline(CoreSubscriber<? super T> actual, SyncEngine engine, Function<? super T, ? extends SyncPoint> pointOf,
                 int maxInFlight, Duration timeout, boolean ordered) {
            this.actual = actual;
            this.engine = engine;
            this.pointOf = pointOf;
            this.maxInFlight = maxInFlight;
            this.timeout = timeout;
            this.ordered = ordered;
            int capacity = Queues.ceilingNextPowerOfTwo(maxInFlight);
            this.slots = new AtomicReferenceArray<>(capacity);
            this.mask = capacity - 1;
            this.free = ordered ? null : new FreeSlots(capacity);
            this.completed = ordered ? null : Queues.<Item<T>>unboundedMultiproducer().get();
        }

        @Override
        public Context currentContext() {
            return actual.currentContext();
        }

        @Override
        public Object scanUnsafe(Attr key) {
            if (key == Attr.PARENT) {
                return upstream;
            }
            if (key == Attr.ACTUAL) {
                return actual;
            }
            if (key == Attr.CANCELLED) {
                return cancelled;
            }
            if (key == Attr.TERMINATED) {
                return terminated && !cancelled;
            }
            if (key == Attr.ERROR) {
                return error;
            }
            if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
                return requested;
            }
            if (key == Attr.PREFETCH) {
                return maxInFlight;
            }
            if (key == Attr.BUFFERED) {
                return (int) Math.max(0, received - emitted);
            }
            if (key == Attr.RUN_STYLE) {
                return Attr.RunStyle.ASYNC;
            }
            return null;
        }

        @Override
        public Stream<? extends Scannable> inners() {
            return IntStream.range(0, slots.length()).mapToObj(slots::get).filter(Objects::nonNull);
        }

        @Override
        public String stepName() {
            return ordered ? "gpusync.awaitEach" : "gpusync.awaitEachUnordered";
        }

        @Override
        public void onSubscribe(Subscription s) {
            if (Operators.validate(upstream, s)) {
                upstream = s;
                actual.onSubscribe(this);
            }
        }

        @Override
        public void onNext(T t) {
            if (upstreamDone || cancelled || error != null) {
                Operators.onDiscard(t, actual.currentContext());
                return;
            }
            SyncPoint point;
            try {
                point = Objects.requireNonNull(pointOf.apply(t), "pointOf returned null");
            } catch (Throwable e) {
                fail(Operators.onOperatorError(upstream, e, t, actual.currentContext()));
                return;
            }
            long seq = received;
            int index;
            if (ordered) {
                index = (int) seq & mask;
                if (slots.get(index) != null) {
                    overflow(t);
                    return;
                }
            } else {
                index = free.poll();
                if (index < 0) {
                    overflow(t);
                    return;
                }
            }
            Item<T> item = new Item<>(this, t, point, seq, index);
            slots.lazySet(index, item);
            received = seq + 1; // publishes the slot to the drain loop
            try {
                engine.subscribe(point.waiter(), timeout, item); // may complete (and drain) right here
            } catch (Throwable e) {
                item.onError(e);
            }
            if (cancelled || error != null) {
                item.cancel(); // a cancel that raced with this item may not have seen it
            }
        }

        private void overflow(T t) {
            Operators.onDiscard(t, actual.currentContext());
            upstream.cancel();
            fail(Exceptions.failWithOverflow("awaitEach: the source sent more items than requested"));
        }

        @Override
        public void onError(Throwable t) {
            if (upstreamDone) {
                Operators.onErrorDropped(t, actual.currentContext());
                return;
            }
            fail(t);
        }

        @Override
        public void onComplete() {
            if (upstreamDone) {
                return;
            }
            upstreamDone = true;
            drain();
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                upstream.cancel();
                fail(Exceptions.nullOrNegativeRequestException(n));
                return;
            }
            Operators.addCap(REQUESTED, this, n);
            drain();
        }

        @Override
        public void cancel() {
            if (cancelled) {
                return;
            }
            cancelled = true;
            upstream.cancel();
            cancelWaits(); // at once, here: the drain loop may be busy elsewhere
            if (WIP.getAndIncrement(this) == 0) {
                clear();
            }
        }

        /**
         * The first error terminates: later ones are dropped ({@link InnerWait#lateError}). Cancels upstream and
         * the other waits.
         */
        private void fail(Throwable e) {
            if (!ERROR.compareAndSet(this, null, e)) {
                InnerWait.lateError(e, actual.currentContext());
                return;
            }
            upstream.cancel();
            cancelWaits();
            drain();
        }

        void itemSignalled(Item<T> item) {
            if (!ordered) {
                completed.offer(item);
            }
            drain();
        }

        void itemFailed(Item<T> item, Throwable e) {
            fail(failureOf(e, item.seq, item.point));
        }

        private void cancelWaits() {
            for (int i = 0; i < slots.length(); i++) {
                Item<T> item = slots.get(i);
                if (item != null) {
                    item.cancel();
                }
            }
        }

        private void clear() {
            for (int i = 0; i < slots.length(); i++) {
                Item<T> item = slots.getAndSet(i, null);
                if (item != null) {
                    item.cancel();
                    Operators.onDiscard(item.value, actual.currentContext());
                }
            }
            if (completed != null) {
                completed.clear();
            }
        }

        private void drain() {
            if (WIP.getAndIncrement(this) != 0) {
                return;
            }
            int missed = 1;
            for (;;) {
                if (!terminated) {
                    if (ordered) {
                        drainOrdered();
                    } else {
                        drainUnordered();
                    }
                }
                missed = WIP.addAndGet(this, -missed);
                if (missed == 0) {
                    return;
                }
            }
        }

        /** Whether the Flux has ended (cancelled or failed); if so, frees everything and signals the error. */
        private boolean checkTerminated() {
            if (cancelled) {
                clear();
                terminated = true;
                return true;
            }
            Throwable e = error;
            if (e != null) {
                clear();
                terminated = true;
                actual.onError(e);
                return true;
            }
            return false;
        }

        private void drainOrdered() {
            long r = requested;
            for (;;) {
                if (checkTerminated()) {
                    return;
                }
                boolean done = upstreamDone; // before received: every item is counted once done is seen
                long c = emitted;
                if (c == received) {
                    if (done) {
                        terminated = true;
                        actual.onComplete();
                        return;
                    }
                    break;
                }
                if (c == r) {
                    r = requested;
                    if (c == r) {
                        break;
                    }
                }
                int index = (int) c & mask;
                Item<T> item = slots.get(index);
                if (item == null || !item.signalled) {
                    break;
                }
                slots.lazySet(index, null);
                emitted = c + 1;
                T v = item.value;
                item.value = null;
                actual.onNext(v);
            }
            replenish();
        }

        private void drainUnordered() {
            long r = requested;
            for (;;) {
                if (checkTerminated()) {
                    return;
                }
                boolean done = upstreamDone;
                long e = emitted;
                if (e == received) {
                    if (done) {
                        terminated = true;
                        actual.onComplete();
                        return;
                    }
                    break;
                }
                if (e == r) {
                    r = requested;
                    if (e == r) {
                        break;
                    }
                }
                Item<T> item = completed.poll();
                if (item == null) {
                    break;
                }
                slots.lazySet(item.index, null);
                free.offer(item.index);
                emitted = e + 1;
                T v = item.value;
                item.value = null;
                actual.onNext(v);
            }
            replenish();
        }

        /** Asks upstream for what downstream wants, up to {@code maxInFlight} beyond what has been emitted. */
        private void replenish() {
            long r = requested;
            long cap = emitted + maxInFlight;
            long target = Math.min(r, cap < 0 ? Long.MAX_VALUE : cap);
            long n = target - requestedUpstream;
            if (n > 0 && !cancelled && error == null) {
                requestedUpstream = target;
                upstream.request(n);
            }
        }
    }

    /**
     * Free slot indices of the unordered operator: a ring of ints with one producer (the drain loop, which frees)
     * and one consumer ({@code onNext}, which takes); starts full.
     */
    static final class FreeSlots {
        private final int[] indices;
        private final int mask;
        private volatile long produced;
        private long consumed; // onNext only

        FreeSlots(int capacity) {
            indices = new int[capacity];
            mask = capacity - 1;
            for (int i = 0; i < capacity; i++) {
                indices[i] = i;
            }
            produced = capacity;
        }

        /** A free index, or -1 if none. */
        int poll() {
            long c = consumed;
            if (c == produced) {
                return -1;
            }
            int index = indices[(int) c & mask];
            consumed = c + 1;
            return index;
        }

        void offer(int index) {
            long p = produced;
            indices[(int) p & mask] = index;
            produced = p + 1; // publishes the write
        }
    }

    /** One item in flight: the subscriber of its engine wait. */
    static final class Item<T> extends InnerWait {
        private final Pipeline<T> parent;
        final SyncPoint point;
        final long seq;
        final int index;
        T value;
        volatile boolean signalled;

        Item(Pipeline<T> parent, T value, SyncPoint point, long seq, int index) {
            this.parent = parent;
            this.value = value;
            this.point = point;
            this.seq = seq;
            this.index = index;
        }

        @Override
        public Context currentContext() {
            return parent.actual.currentContext();
        }

        @Override
        void signalled() {
            signalled = true;
            parent.itemSignalled(this);
        }

        @Override
        void failed(Throwable error) {
            parent.itemFailed(this, error);
        }

        @Override
        Object coordinator() {
            return parent;
        }
    }
}
