package io.gpusync.reactor;

import io.gpusync.SyncException;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

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
 * that decided the outcome.
 */
final class WaitGroupMono extends Mono<Void> {
    enum Mode { ALL, ANY }

    private final List<Mono<Void>> members;
    private final Mode mode;

    WaitGroupMono(List<Mono<Void>> members, Mode mode) {
        this.members = List.copyOf(members);
        this.mode = mode;
    }

    @Override
    public void subscribe(CoreSubscriber<? super Void> actual) {
        Group group = new Group(actual, members.size(), mode);
        actual.onSubscribe(group);
        for (int i = 0; i < members.size() && !group.isDone(); i++) {
            members.get(i).subscribe(group.members[i]);
        }
    }

    private static final class Group implements Subscription {
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
                    Operators.onErrorDropped(error, actual.currentContext());
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
                cancelMembers();
            }
        }
    }

    private static final class Member implements CoreSubscriber<Void> {
        private static final AtomicReferenceFieldUpdater<Member, Subscription> S =
                AtomicReferenceFieldUpdater.newUpdater(Member.class, Subscription.class, "s");
        private final Group group;
        private final int index;
        volatile Subscription s;

        Member(Group group, int index) {
            this.group = group;
            this.index = index;
        }

        @Override
        public Context currentContext() {
            return group.actual.currentContext();
        }

        @Override
        public void onSubscribe(Subscription subscription) {
            if (Operators.setOnce(S, this, subscription)) {
                subscription.request(Long.MAX_VALUE);
            }
        }

        @Override
        public void onNext(Void v) {
            // Mono<Void>: no values
        }

        @Override
        public void onError(Throwable t) {
            group.memberFailed(index, t);
        }

        @Override
        public void onComplete() {
            group.memberCompleted();
        }

        void cancel() {
            Operators.terminate(S, this);
        }
    }
}
