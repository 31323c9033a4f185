package io.gpusync.reactor;

import io.gpusync.SyncPoint;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * {@link SyncEngine#awaitFirst}: a race of engine waits that emits the point first signalled — the instance
 * given — and cancels (frees) the other waits at once. Like {@link WaitGroupMono}, every wait starts at
 * subscription, without demand; the winner is held until requested. A wait that fails is set aside while another
 * may still be signalled; when all have failed, the result fails with the failure that came first in time, the
 * others added to it as suppressed. Cancelling the result cancels every wait. Signals run on the thread of the
 * wait that decided the outcome. No lock: one compare-and-set decides the outcome. Scannable as the step
 * {@code gpusync.awaitFirst}, its subscription with the member waits as inners.
 */
final class MonoAwaitFirst extends Mono<SyncPoint> implements Scannable {
    private final SyncEngine engine;
    private final List<SyncPoint> points;
    private final Duration timeout;

    MonoAwaitFirst(SyncEngine engine, List<SyncPoint> points, Duration timeout) {
        this.engine = engine;
        this.points = points;
        this.timeout = timeout;
    }

    /** The race, passed through Reactor's assembly hooks as reactor-core's operators are. */
    static Mono<SyncPoint> of(SyncEngine engine, List<SyncPoint> points, Duration timeout) {
        return onAssembly(new MonoAwaitFirst(engine, points, timeout));
    }

    @Override
    public Object scanUnsafe(Attr key) {
        return key == Attr.RUN_STYLE ? Attr.RunStyle.ASYNC : null;
    }

    @Override
    public String stepName() {
        return "gpusync.awaitFirst";
    }

    @Override
    public void subscribe(CoreSubscriber<? super SyncPoint> actual) {
        Race race = new Race(actual, points);
        actual.onSubscribe(race);
        for (int i = 0; i < points.size() && !race.isDecided(); i++) {
            try {
                engine.subscribe(points.get(i).waiter(), timeout, race.members[i]);
            } catch (Throwable e) {
                race.members[i].onError(e);
            }
        }
    }

    static final class Race extends Operators.MonoSubscriber<SyncPoint, SyncPoint> {
        private static final AtomicIntegerFieldUpdater<Race> DECIDED =
                AtomicIntegerFieldUpdater.newUpdater(Race.class, "decided");
        private static final AtomicIntegerFieldUpdater<Race> FAILURES =
                AtomicIntegerFieldUpdater.newUpdater(Race.class, "failures");
        private static final AtomicIntegerFieldUpdater<Race> OUTSTANDING =
                AtomicIntegerFieldUpdater.newUpdater(Race.class, "outstanding");

        final Member[] members;
        /** Failures in the order they happened. */
        private final AtomicReferenceArray<Throwable> errors;
        private volatile int decided;
        private volatile int failures;
        private volatile int outstanding;

        Race(CoreSubscriber<? super SyncPoint> actual, List<SyncPoint> points) {
            super(actual);
            members = new Member[points.size()];
            for (int i = 0; i < members.length; i++) {
                members[i] = new Member(this, points.get(i));
            }
            errors = new AtomicReferenceArray<>(members.length);
            outstanding = members.length;
        }

        boolean isDecided() {
            return decided != 0;
        }

        private boolean decide() {
            return DECIDED.compareAndSet(this, 0, 1);
        }

        void signalled(Member winner) {
            if (decide()) {
                cancelMembers();
                complete(winner.point);
            }
        }

        void failed(Throwable e) {
            errors.set(FAILURES.getAndIncrement(this), e);
            if (OUTSTANDING.decrementAndGet(this) == 0 && decide()) {
                Throwable first = errors.get(0);
                for (int i = 1; i < errors.length(); i++) {
                    Throwable other = errors.get(i);
                    if (other != null && other != first) {
                        first.addSuppressed(other);
                    }
                }
                actual.onError(first);
            }
        }

        private void cancelMembers() {
            for (Member m : members) {
                m.cancel();
            }
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                if (decide()) {
                    cancelMembers();
                    actual.onError(Exceptions.nullOrNegativeRequestException(n));
                }
                return;
            }
            super.request(n);
        }

        @Override
        public void cancel() {
            super.cancel();
            if (decide()) {
                cancelMembers();
            }
        }

        @Override
        public Object scanUnsafe(Attr key) {
            return key == Attr.RUN_STYLE ? Attr.RunStyle.ASYNC : super.scanUnsafe(key);
        }

        @Override
        public Stream<? extends Scannable> inners() {
            return Arrays.stream(members);
        }

        @Override
        public String stepName() {
            return "gpusync.awaitFirst";
        }
    }

    /** One point's wait in the race. */
    static final class Member extends InnerWait {
        private final Race race;
        final SyncPoint point;

        Member(Race race, SyncPoint point) {
            this.race = race;
            this.point = point;
        }

        @Override
        public Context currentContext() {
            return race.currentContext();
        }

        @Override
        void signalled() {
            race.signalled(this);
        }

        @Override
        void failed(Throwable error) {
            race.failed(error);
        }

        @Override
        Object coordinator() {
            return race;
        }
    }
}
