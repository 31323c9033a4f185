package io.gpusync.reactor;

import io.gpusync.SyncException;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * {@link SyncEngine#awaitAll} and {@link SyncEngine#awaitAny}: one {@code Mono<Void>} over several waits that,
 * like a single wait, starts every member wait at subscription — not on {@code request}, as
 * {@code Mono.when}/{@code Mono.firstWithValue} do — so a failed point or a timeout is signalled without
 * demand. Each subscription is a new set of waits.
 *
 * <p>{@link Mode#ALL} completes when every member has, and fails with the first error, cancelling (freeing)
 * the other members. {@link Mode#ANY} completes with the first member to complete and cancels the others;
 * a member's error is set aside while another member may still complete; when all have failed it fails with
 * the error of the first member (in the order given) that failed with a {@link SyncException}, the others
 * suppressed. Cancelling the result cancels every member. Signals run on the thread of the member's wait
 * that decided the outcome. Scannable as the step {@code gpusync.awaitAll} or {@code gpusync.awaitAny}, its
 * subscription with the member waits as inners.
 */
final class WaitGroupMono extends Mono<Void> implements Scannable {
    enum Mode { ALL, ANY }

    private final List<Mono<Void>> members;
    private final Mode mode;

    WaitGroupMono(List<Mono<Void>> members, Mode mode) {
        this.members = List.copyOf(members);
        this.mode = mode;
    }

    /** The group, passed through Reactor's assembly hooks as reactor-core's operators are. */
    static Mono<Void> of(List<Mono<Void>> members, Mode mode) {
        return onAssembly(new WaitGroupMono(members, mode));
    }

    @Override
    public Object scanUnsafe(Attr key) {
        return key == Attr.RUN_STYLE ? Attr.RunStyle.ASYNC : null;
    }

    @Override
    public String stepName() {
        return mode == Mode.ALL ? "gpusync.awaitAll" : "gpusync.awaitAny";
    }

    @Override
    public void subscribe(CoreSubscriber<? super Void> actual) {
        Group group = new Group(actual, members.size(), mode);
        actual.onSubscribe(group);
        for (int i = 0; i < members.size() && !group.isDone(); i++) {
            members.get(i).subscribe(group.members[i]);
        }
    }

    private static final class Group implements Subscription, Scannable {
        private static final AtomicIntegerFieldUpdater<Group> DONE =
                AtomicIntegerFieldUpdater.newUpdater(Group.class, "done");
        private static final AtomicIntegerFieldUpdater<Group> OUTSTANDING =
                AtomicIntegerFieldUpdater.newUpdater(Group.class, "outstanding");

        final CoreSubscriber<? super Void> actual;
        final Member[] members;
        final Mode mode;
        final AtomicReferenceArray<Throwable> errors;
        volatile int done;
        volatile int outstanding;
        /** Whether the subscriber cancelled (rather than the group terminating). */
        volatile boolean cancelled;

        Group(CoreSubscriber<? super Void> actual, int n, Mode mode) {
            this.actual = actual;
            this.mode = mode;
            this.members = new Member[n];
            for (int i = 0; i < n; i++) {
                members[i] = new Member(this, i);
            }
            this.errors = new AtomicReferenceArray<>(n);
            this.outstanding = n;
        }

        boolean isDone() {
            return done != 0;
        }

        private boolean claim() {
            return DONE.compareAndSet(this, 0, 1);
        }

        void memberCompleted() {
            if (mode == Mode.ANY || OUTSTANDING.decrementAndGet(this) == 0) {
                if (claim()) {
                    cancelMembers();
                    actual.onComplete();
                }
            }
        }

        void memberFailed(int index, Throwable error) {
            if (mode == Mode.ALL) {
                if (claim()) {
                    cancelMembers();
                    actual.onError(error);
                } else {
                    InnerWait.lateError(error, actual.currentContext());
                }
                return;
            }
            errors.set(index, error);
            if (OUTSTANDING.decrementAndGet(this) == 0 && claim()) {
                actual.onError(firstError());
            }
        }

        private Throwable firstError() {
            Throwable first = null;
            for (int i = 0; i < errors.length(); i++) {
                Throwable e = errors.get(i);
                if (e instanceof SyncException && first == null) {
                    first = e;
                }
            }
            if (first == null) {
                first = errors.get(0);
            }
            for (int i = 0; i < errors.length(); i++) {
                Throwable e = errors.get(i);
                if (e != null && e != first) {
                    first.addSuppressed(e);
                }
            }
            return first;
        }

        private void cancelMembers() {
            for (Member m : members) {
                m.cancel();
            }
        }

        /** A {@code Mono<Void>} emits no value: demand changes nothing, but a non-positive one fails (§3.9). */
        @Override
        public void request(long n) {
            if (n <= 0 && claim()) {
                cancelMembers();
                actual.onError(reactor.core.Exceptions.nullOrNegativeRequestException(n));
            }
        }

        @Override
        public void cancel() {
            if (claim()) {
                cancelled = true;
                cancelMembers();
            }
        }

        @Override
        public Object scanUnsafe(Attr key) {
            if (key == Attr.ACTUAL) {
                return actual;
            }
            if (key == Attr.CANCELLED) {
                return cancelled;
            }
            if (key == Attr.TERMINATED) {
                return isDone() && !cancelled;
            }
            if (key == Attr.RUN_STYLE) {
                return Attr.RunStyle.ASYNC;
            }
            return null;
        }

        @Override
        public Stream<? extends Scannable> inners() {
            return Arrays.stream(members);
        }

        @Override
        public String stepName() {
            return mode == Mode.ALL ? "gpusync.awaitAll" : "gpusync.awaitAny";
        }
    }

    /** One member's wait. */
    private static final class Member extends InnerWait {
        private final Group group;
        private final int index;

        Member(Group group, int index) {
            this.group = group;
            this.index = index;
        }

        @Override
        public Context currentContext() {
            return group.actual.currentContext();
        }

        @Override
        void signalled() {
            group.memberCompleted();
        }

        @Override
        void failed(Throwable error) {
            group.memberFailed(index, error);
        }

        @Override
        Object coordinator() {
            return group;
        }
    }
}
