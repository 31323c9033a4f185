package io.gpusync.testsuite;

import io.gpusync.ErrorKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;

import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The contract every backend's {@link SyncWaiter} keeps, run against real drivers — as Netty runs one
 * testsuite per transport. A backend subclasses it with a factory of {@linkplain Subject subjects}
 * (an unsignalled point plus the producer's means to signal it, fail it and observe its release) and
 * inherits every specification below. Specifications that need an ability a backend lacks (failing a point,
 * a callback, a native object to release) are skipped for it, with the reason.
 *
 * <p>Waits run on platform threads (native waits pin virtual threads). Time bounds here are liveness
 * bounds ("ends at all, not after its whole timeout"), never performance claims.
 */
public abstract class SyncWaiterContract {
    /** Long enough that reaching it means the wait ignored what should have ended it. */
    protected static final Duration LONG = Duration.ofSeconds(30);
    /** How long a wait that should end promptly may take, generously (a loaded CI machine). */
    protected static final Duration PROMPTLY = Duration.ofSeconds(5);

    private final List<Subject> subjects = new ArrayList<>();

    /**
     * One sync point under test and its producer. The point is unsignalled when made and stays so until
     * {@link #signal()}.
     */
    protected interface Subject {
        /** The waiter under test (a point's waiter, or a waiter that is no point, such as a fence's). */
        SyncWaiter waiter();

        /** Signals the point from the producer side (the waiter may see it a moment later). */
        void signal();

        /** Whether {@link #fail()} is possible for this backend. */
        default boolean canFail() {
            return false;
        }

        /** Makes the point fail, as a driver error would (only when {@link #canFail()}). */
        default void fail() {
            throw new UnsupportedOperationException("this backend cannot fail a point on demand");
        }

        /** Whether the waiter owns a native object that closing it releases. */
        default boolean ownsNativeObject() {
            return true;
        }

        /**
         * Drops every hold the subject keeps on the native object besides the waiter's own — producer
         * objects that share its anchor — without making {@link #signal()} impossible.
         */
        default void dropProducerHolds() {
        }

        /** Whether the native object has been released (only when {@link #ownsNativeObject()}). */
        default boolean released() {
            throw new UnsupportedOperationException();
        }

        /** Callback registrations pending on the backend, where it counts them. */
        default OptionalInt pendingRegistrations() {
            return OptionalInt.empty();
        }

        /**
         * Cleans up whatever the test left — the point may be signalled, failed or neither, the waiter
         * closed or not — leaving no producer work waiting.
         */
        default void close() {
            waiter().close();
        }
    }

    /**
     * A {@link Subject} whose {@link #signal()} and {@link #fail()} take effect once, whichever comes first.
     *
     * <p><b>A signal is a use of the native object.</b> A subject whose {@link #doSignal()} reaches the waiter's own
     * native object through its raw handle (no producer object holds it any more once
     * {@link Subject#dropProducerHolds()} ran) names that object's anchor in {@link #signalledObject()};
     * {@link #signal()} and {@link #fail()} then hold it for the whole driver call. Without the hold the signal ends
     * the last wait, the waiting thread closes the last waiter and releases the object <em>while the signalling call
     * is still inside the driver</em>: Mesa 22.3's {@code eglSignalSyncKHR} wakes the waiters with the display
     * unlocked and decrements the sync's resource count afterwards, a write into the freed sync that corrupted the
     * JVM's thread list (the SIGSEGVs in {@code _int_malloc} / {@code GlobalCounter::write_synchronize} /
     * {@code SafepointSynchronize::arm_safepoint} of the core test fork).
     */
    protected abstract static class OnceSubject implements Subject {
        private final java.util.concurrent.atomic.AtomicBoolean settled = new java.util.concurrent.atomic.AtomicBoolean();

        /** Signals the point on the producer side; called at most once. */
        protected abstract void doSignal();

        /** Fails the point; called at most once (only when {@link #canFail()}). */
        protected void doFail() {
            throw new UnsupportedOperationException("this backend cannot fail a point on demand");
        }

        /**
         * The anchor of the native object that {@link #doSignal()} / {@link #doFail()} call the driver on through a
         * raw handle, held for the duration of the call; {@code null} when a producer object of its own keeps what
         * it signals alive (a user event, a timeline, an fd of its own).
         */
        protected NativeAnchor signalledObject() {
            return null;
        }

        @Override
        public final void signal() {
            signal(() -> { });
        }

        /** {@link #signal()}, running {@code beforeReturning} after the driver call, still inside the hold. */
        private void signal(Runnable beforeReturning) {
            if (settled.compareAndSet(false, true)) {
                whileHeld(() -> {
                    doSignal();
                    beforeReturning.run();
                });
            }
        }

        @Override
        public final void fail() {
            if (settled.compareAndSet(false, true)) {
                whileHeld(this::doFail);
            }
        }

        private void whileHeld(Runnable driverCall) {
            NativeAnchor object = signalledObject();
            if (object == null) {
                driverCall.run();
                return;
            }
            try (NativeAnchor.Claim inProgress = object.claim(this)) {
                driverCall.run();
            }
        }

        /** Whether {@link #signal()} or {@link #fail()} has run. */
        protected final boolean settled() {
            return settled.get();
        }
    }

    /** A fresh, unsignalled subject. */
    protected abstract Subject newSubject();

    private Subject subject() {
        Subject s = newSubject();
        subjects.add(s);
        return s;
    }

    @AfterEach
    void closeSubjects() {
        try {
            subjects.forEach(Subject::close);
        } finally {
            tearDown();
        }
    }

    /** Runs after every subject of a test is closed (a subclass closes its per-test producer here). */
    protected void tearDown() {
    }

    // ------------------------------------------------------------------ specifications

    @Test
    void isNeverSignalledEarly() {
        Subject s = subject();
        SyncWaiter p = s.waiter();
        assertThat(p.isSignaled()).isFalse();
        Duration timeout = Duration.ofMillis(100);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> p.await(timeout)).isInstanceOf(SyncTimeoutException.class);
        assertThat(System.nanoTime() - t0).as("never before its timeout").isGreaterThanOrEqualTo(timeout.toNanos());
        assertThat(p.isSignaled()).isFalse();
        s.signal();
        p.await(LONG);
        assertThat(p.isSignaled()).isTrue();
    }

    @Test
    void durationZeroOnlyProbes() throws Exception {
        Subject s = subject();
        SyncWaiter p = s.waiter();
        CompletableFuture<Void> probe = onPlatformThread(() -> p.await(Duration.ZERO));
        assertThatThrownBy(() -> probe.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS))
                .as("a probe of an unsignalled point times out at once, without blocking")
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SyncTimeoutException.class);
        s.signal();
        eventually("the probe sees the signal", p::isSignaled);
        p.await(Duration.ZERO);
    }

    @Test
    void foreverWaitsUntilSignalled() throws Exception {
        Subject s = subject();
        SyncWaiter p = s.waiter();
        CompletableFuture<Void> waiting = onPlatformThread(() -> p.await(SyncPoint.FOREVER));
        settle();
        assertThat(waiting).as("still waiting").isNotDone();
        s.signal();
        waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
        assertThat(p.isSignaled()).isTrue();
    }

    @Test
    void aWaitEndsWhenSignalledMidWay() throws Exception {
        Subject s = subject();
        SyncWaiter p = s.waiter();
        CompletableFuture<Void> waiting = onPlatformThread(() -> p.await(LONG));
        settle();
        s.signal();
        waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void closeDuringAWaitDefersTheReleaseUntilTheWaitReturns() throws Exception {
        Subject s = subject();
        SyncWaiter p = s.waiter();
        CompletableFuture<Void> waiting = onPlatformThread(() -> p.await(LONG));
        settle();
        s.dropProducerHolds();
        p.close();
        p.close(); // idempotent
        if (s.ownsNativeObject()) {
            assertThat(s.released()).as("the native object outlives the wait in progress").isFalse();
        }
        assertThat(waiting).isNotDone();
        s.signal();
        waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS); // the wait ends normally, not with an error
        if (s.ownsNativeObject()) {
            eventually("the release once the wait returned", s::released);
            assertThatThrownBy(() -> p.await(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void theWaiterMayBeClosedRightAfterTheWaitEnds() throws Exception {
        Subject s = subject();
        SyncWaiter p = s.waiter();
        CompletableFuture<Void> waiting = onPlatformThread(() -> {
            p.await(LONG);
            s.dropProducerHolds();
            p.close(); // on the waiting thread, as a doFinally would
        });
        settle();
        s.signal();
        waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
        if (s.ownsNativeObject()) {
            eventually("the release", s::released);
        }
    }

    @Test
    void aSignalThatEndsTheLastWaitReleasesNothingBeforeTheSignallingCallReturns() throws Exception {
        Subject s = subject();
        assumeTrue(s.ownsNativeObject(), "this backend's waiter owns no native object");
        assumeTrue(s instanceof OnceSubject o && o.signalledObject() != null,
                "a producer object of its own keeps what this backend signals alive");
        SyncWaiter p = s.waiter();
        CompletableFuture<Void> waiting = onPlatformThread(() -> {
            p.await(LONG);
            s.dropProducerHolds();
            p.close(); // the last hold but the signal's, dropped on the waiting thread as a doFinally would
        });
        settle();
        AtomicBoolean releasedDuringTheSignal = new AtomicBoolean(true);
        ((OnceSubject) s).signal(() -> {
            try { // the wait has ended and its waiter is closed, while the signalling call has not returned yet
                waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError("the signalled wait did not end", e);
            }
            releasedDuringTheSignal.set(s.released());
        });
        assertThat(releasedDuringTheSignal).as("the native object outlives the driver call that signals it").isFalse();
        eventually("the release once the signal returned", s::released);
    }

    @Test
    void anInterruptedThreadIsCancelledPromptlyAndKeepsItsInterruptFlag() throws Exception {
        Subject s = subject();
        SyncWaiter p = s.waiter();
        AtomicReference<Boolean> flagAfter = new AtomicReference<>();
        CompletableFuture<Void> waiting = onPlatformThread(() -> {
            Thread.currentThread().interrupt();
            try {
                p.await(LONG);
            } finally {
                flagAfter.set(Thread.currentThread().isInterrupted());
            }
        });
        assertCancelled(waiting);
        assertThat(flagAfter.get()).as("the interrupt flag stays set").isTrue();
    }

    @Test
    void anInterruptDuringAWaitCancelsItPromptlyAndKeepsTheFlag() throws Exception {
        Subject s = subject();
        SyncWaiter p = s.waiter();
        AtomicReference<Thread> waiter = new AtomicReference<>();
        AtomicReference<Boolean> flagAfter = new AtomicReference<>();
        OptionalInt base = s.pendingRegistrations();
        CompletableFuture<Void> waiting = onPlatformThread(() -> {
            waiter.set(Thread.currentThread());
            try {
                p.await(SyncPoint.FOREVER);
            } finally {
                flagAfter.set(Thread.currentThread().isInterrupted());
            }
        });
        settle();
        waiter.get().interrupt();
        assertCancelled(waiting);
        assertThat(flagAfter.get()).as("the interrupt flag stays set").isTrue();
        base.ifPresent(n -> eventually("the cancelled wait's registration is gone",
                () -> s.pendingRegistrations().getAsInt() == n));
        s.signal(); // the point itself is unaffected
        p.await(LONG);
    }

    @Test
    void aDriverErrorIsNeverFoldedIntoFalse() {
        Subject s = subject();
        assumeTrue(s.canFail(), "this backend cannot fail a point on demand");
        SyncWaiter p = s.waiter();
        s.fail();
        eventually("the failure is visible", () -> {
            try {
                p.isSignaled();
                return false;
            } catch (SyncException expected) {
                return true;
            }
        });
        assertThatThrownBy(p::isSignaled).isInstanceOf(SyncException.class)
                .isNotInstanceOf(SyncTimeoutException.class);
        assertThatThrownBy(() -> p.await(Duration.ZERO)).isInstanceOf(SyncException.class)
                .isNotInstanceOf(SyncTimeoutException.class);
        assertThatThrownBy(() -> p.await(LONG)).isInstanceOf(SyncException.class)
                .isNotInstanceOf(SyncTimeoutException.class);
    }

    @Test
    void aWaitInProgressEndsWithTheDriverErrorNotATimeout() throws Exception {
        Subject s = subject();
        assumeTrue(s.canFail(), "this backend cannot fail a point on demand");
        SyncWaiter p = s.waiter();
        CompletableFuture<Void> waiting = onPlatformThread(() -> p.await(LONG));
        settle();
        s.fail();
        assertThatThrownBy(() -> waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SyncException.class)
                .isNotInstanceOf(SyncTimeoutException.class);
    }

    @Test
    void aThrowingListenerHarmsNoOtherWait() throws Exception {
        Subject s = subject();
        SignalCallbackWaiter callbacks = callbackWaiter(s);
        SyncWaiter p = s.waiter();
        CompletableFuture<Void> blocked = onPlatformThread(() -> p.await(SyncPoint.FOREVER));
        settle();
        Recorder before = new Recorder();
        Recorder after = new Recorder();
        callbacks.onSignal(new Throwing());
        callbacks.onSignal(before);
        callbacks.onSignal(new Throwing());
        callbacks.onSignal(after);
        callbacks.onSignal(new Throwing());
        try {
            s.signal();
        } catch (IllegalStateException fromAListener) {
            // a backend that runs listeners on the signalling thread may report their exception there
        }
        eventually("every other listener", () -> before.calls.get() == 1 && after.calls.get() == 1);
        blocked.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
        assertThat(before.error.get()).isNull();
        assertThat(after.error.get()).isNull();
    }

    @Test
    void aCancelledRegistrationIsFreedAndNeverCalled() throws Exception {
        Subject s = subject();
        SignalCallbackWaiter callbacks = callbackWaiter(s);
        OptionalInt base = s.pendingRegistrations();
        Recorder cancelled = new Recorder();
        Recorder kept = new Recorder();
        CallbackRegistration registration = callbacks.onSignal(cancelled);
        callbacks.onSignal(kept);
        registration.cancel();
        registration.cancel(); // idempotent
        base.ifPresent(n -> assertThat(s.pendingRegistrations().getAsInt()).as("freed at once").isEqualTo(n + 1));
        s.signal();
        eventually("the kept listener", () -> kept.calls.get() == 1);
        Thread.sleep(50);
        assertThat(cancelled.calls).as("a cancelled listener is never called").hasValue(0);
        base.ifPresent(n -> eventually("nothing left registered", () -> s.pendingRegistrations().getAsInt() == n));
    }

    @Test
    void aListenerOfASignalledPointRunsOnce() {
        Subject s = subject();
        SignalCallbackWaiter callbacks = callbackWaiter(s);
        s.signal();
        eventually("signalled", s.waiter()::isSignaled);
        Recorder r = new Recorder();
        callbacks.onSignal(r).cancel();
        eventually("the listener", () -> r.calls.get() == 1);
        assertThat(r.error.get()).isNull();
    }

    @Test
    void aWaitOnTheThreadsTheWaiterLendsEndsWhenSignalledAndHandingItOverNeverBlocks() throws Exception {
        Subject s = subject();
        SyncWaiter p = s.waiter();
        assumeTrue(p instanceof BlockingWaiter b && b.waitThreads() != null, "this backend lends no threads");
        Executor lender = ((BlockingWaiter) p).waitThreads();
        CompletableFuture<String> waitedOn = new CompletableFuture<>();
        lender.execute(() -> {
            try {
                p.await(SyncPoint.FOREVER);
                waitedOn.complete(Thread.currentThread().getName());
            } catch (Throwable e) {
                waitedOn.completeExceptionally(e);
            }
        });
        // execute returned with the point unsignalled: the wait was not run on this thread
        assertThat(waitedOn).isNotDone();
        s.signal();
        assertThat(waitedOn.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS))
                .isNotEqualTo(Thread.currentThread().getName());
    }

    // ------------------------------------------------------------------ support

    private static SignalCallbackWaiter callbackWaiter(Subject s) {
        assumeTrue(s.waiter() instanceof SignalCallbackWaiter, "this backend has no onSignal");
        return (SignalCallbackWaiter) s.waiter();
    }

    private static void assertCancelled(CompletableFuture<Void> waiting) throws InterruptedException {
        try {
            waiting.get(PROMPTLY.toSeconds(), TimeUnit.SECONDS);
            fail("an interrupted wait must not succeed");
        } catch (TimeoutException e) {
            fail("an interrupted wait must end promptly, not run on to its timeout");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(SyncCancelledException.class);
            assertThat(((SyncException) e.getCause()).kind()).isEqualTo(ErrorKind.CANCELLED);
        }
    }

    /** Runs {@code task} on a new platform thread (native waits pin virtual threads). */
    protected static CompletableFuture<Void> onPlatformThread(Runnable task) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("contract-waiter").start(() -> {
            try {
                task.run();
                f.complete(null);
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return f;
    }

    /** Gives a thread that is about to block time to get into its wait. */
    protected static void settle() throws InterruptedException {
        Thread.sleep(100);
    }

    /** Polls {@code condition} until it holds, failing after {@link #PROMPTLY}. */
    protected static void eventually(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + PROMPTLY.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("still waiting for: " + what);
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** Records what a listener received. */
    protected static final class Recorder implements SignalListener {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicReference<SyncException> error = new AtomicReference<>();

        @Override
        public void signalled() {
            calls.incrementAndGet();
        }

        @Override
        public void failed(SyncException e) {
            error.set(e);
            calls.incrementAndGet();
        }
    }

    /** A subscriber's bug: throws from both methods. */
    private static final class Throwing implements SignalListener {
        @Override
        public void signalled() {
            throw new IllegalStateException("a listener's bug");
        }

        @Override
        public void failed(SyncException error) {
            throw new IllegalStateException("a listener's bug");
        }
    }
}
