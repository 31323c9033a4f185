package io.gpusync.opencl;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.internal.NativeLibraries;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import io.gpusync.test.opencl.OpenClContext;
import io.gpusync.test.opencl.OpenClUserEvent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The OpenCL backend against a real driver (PoCL 3.1 on the CPU in CI): every test waits on real
 * {@code cl_event}s — user events the test sets, and kernels and markers a real queue runs.
 */
class OpenClEventWaiterTest {
    private static final Duration LONG = Duration.ofSeconds(10);

    OpenClContext cl;
    final List<OpenClUserEvent> userEvents = new ArrayList<>();
    final List<SyncPoint.OpenCl> points = new ArrayList<>();

    @BeforeAll
    static void driver() {
        assumeTrue(NativeLibraries.isAvailable(Cl.LIBRARY), Cl.LIBRARY + " is not installed: no OpenCL on this machine");
        try {
            OpenClContext.createDefault().close();
        } catch (SyncNotSupportedException e) {
            assumeTrue(false, "no OpenCL platform/device: " + e.getMessage());
        }
    }

    @BeforeEach
    void context() {
        cl = OpenClContext.createDefault(); // one per test: a failed command must not poison the next test's queue
    }

    @AfterEach
    void settleAndClose() {
        for (OpenClUserEvent u : userEvents) {
            try {
                u.complete(); // never leave a command waiting on an unset user event
            } catch (SyncException alreadySet) {
                // fine
            }
            u.close();
        }
        points.forEach(p -> p.waiter().close());
        cl.finish();
        cl.close();
    }

    OpenClUserEvent userEvent() {
        OpenClUserEvent u = cl.newUserEvent();
        userEvents.add(u);
        return u;
    }

    SyncPoint.OpenCl track(SyncPoint.OpenCl p) {
        points.add(p);
        return p;
    }

    static OpenClEventWaiter waiter(SyncPoint p) {
        return p.waiter().unwrap(OpenClEventWaiter.class).orElseThrow();
    }

    static int refs(MemorySegment event) {
        return Cl.referenceCount(event, "test");
    }

    static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + LONG.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting for: " + what).isLessThan(deadline);
            Thread.sleep(1);
        }
    }

    /** Waits until a thread has parked in a finite await (its callback registration is pending). */
    static void untilRegistered(int before) throws InterruptedException {
        eventually("a callback registration", () -> ClCallbacks.pending() > before);
    }

    static SyncBackendException backendError(Throwable t) {
        Throwable e = t instanceof ExecutionException ? t.getCause() : t;
        assertThat(e).isInstanceOf(SyncBackendException.class);
        return (SyncBackendException) e;
    }

    /** Records what a listener received, and on which thread. */
    static final class Recorder implements SignalListener {
        final AtomicInteger calls = new AtomicInteger();
        final CompletableFuture<SyncException> outcome = new CompletableFuture<>();
        volatile Thread thread;

        @Override
        public void signalled() {
            thread = Thread.currentThread();
            calls.incrementAndGet();
            outcome.complete(null);
        }

        @Override
        public void failed(SyncException error) {
            thread = Thread.currentThread();
            calls.incrementAndGet();
            outcome.complete(error);
        }
    }

    @Nested
    class Advertising {
        @Test
        void aClEventPointIsAnOpenClPointWithoutValueWhoseWaiterCallsBackButDoesNotClaimToBlock() {
            SyncPoint.OpenCl p = track(userEvent().newPoint());
            assertThat(p.backend()).isEqualTo(BackendKind.OPENCL);
            assertThatThrownBy(() -> p.withValue(1)).isInstanceOf(io.gpusync.SyncInvalidArgumentException.class);
            assertThat(p.waiter()).isInstanceOf(SignalCallbackWaiter.class).isNotInstanceOf(BlockingWaiter.class);
            assertThat(p.waiter().backend()).isEqualTo(BackendKind.OPENCL);
            assertThat(p.waiter().rebindToValue(1)).isEmpty();
            assertThatThrownBy(() -> p.withValue(1)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThat(waiter(p).event()).isEqualTo(p.event());
            assertThat(cl.deviceName()).isNotBlank();
        }
    }

    @Nested
    class HostSignalledCompletion {
        @Test
        void aFiniteAwaitParksUntilAnotherThreadCompletesTheUserEvent() throws Exception {
            OpenClUserEvent u = userEvent();
            SyncPoint p = track(u.newPoint());
            int before = ClCallbacks.pending();
            CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> p.await(LONG));
            untilRegistered(before);
            Thread.sleep(20);
            assertThat(waiting).isNotDone();
            u.complete();
            waiting.get(5, TimeUnit.SECONDS);
            assertThat(p.isSignaled()).isTrue();
            assertThat(ClCallbacks.pending()).isEqualTo(before);
        }

        @Test
        void aForeverAwaitParksOnACallbackUntilTheUserEventCompletes() throws Exception {
            OpenClUserEvent u = userEvent();
            SyncPoint p = track(u.newPoint());
            int before = ClCallbacks.pending();
            CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> p.await(SyncPoint.FOREVER));
            untilRegistered(before); // parked on a callback (clWaitForEvents could not be interrupted)
            Thread.sleep(20);
            assertThat(waiting).isNotDone();
            u.complete();
            waiting.get(5, TimeUnit.SECONDS);
            assertThat(ClCallbacks.pending()).isEqualTo(before);
        }

        @Test
        void aCallbackRegisteredBeforeCompletionRunsOnceWhenTheHostCompletesTheEvent() throws Exception {
            OpenClUserEvent u = userEvent();
            SyncPoint p = track(u.newPoint());
            Recorder r = new Recorder();
            CallbackRegistration reg = ((SignalCallbackWaiter) p.waiter()).onSignal(r);
            assertThat(reg).isNotSameAs(CallbackRegistration.DONE);
            assertThat(r.calls).hasValue(0);
            u.complete();
            // PoCL runs it inside clSetUserEventStatus on this thread; NVIDIA's driver on a thread of its own
            eventually("the callback", () -> r.calls.get() == 1);
            assertThat(r.outcome.get()).isNull();
            reg.cancel(); // after completion: harmless
            assertThat(r.calls).hasValue(1);
        }
    }

    @Nested
    class QueueSignalledCompletion {
        @Test
        void aRealKernelEventIsIncompleteWhileItRunsAndCompleteAfterAwait() {
            SyncPoint p = track(cl.enqueueSpin(200_000_000));
            assertThat(p.isSignaled()).isFalse();
            long t0 = System.nanoTime();
            p.await(LONG);
            long took = System.nanoTime() - t0;
            assertThat(p.isSignaled()).isTrue();
            p.await(Duration.ZERO);
            System.out.printf("spin kernel (200M iterations): await returned after %.1f ms%n", took / 1e6);
        }

        @Test
        void aKernelEventCallbackRunsOnADriverThread() throws Exception {
            SyncPoint p = track(cl.enqueueSpin(100_000_000));
            Recorder r = new Recorder();
            ((SignalCallbackWaiter) p.waiter()).onSignal(r);
            assertThat(r.outcome.get(10, TimeUnit.SECONDS)).isNull();
            assertThat(r.thread).isNotSameAs(Thread.currentThread());
            assertThat(r.calls).hasValue(1);
            assertThat(p.isSignaled()).isTrue();
        }

        @Test
        void aMarkerAfterAUserEventCompletesOnlyOnceTheUserEventDoes() throws Exception {
            OpenClUserEvent gate = userEvent();
            SyncPoint.OpenCl gatePoint = track(gate.newPoint());
            SyncPoint marker = track(cl.enqueueMarker(gatePoint));
            SyncPoint kernel = track(cl.enqueueSpin(1000, gatePoint));
            assertThat(marker.isSignaled()).isFalse();
            assertThatThrownBy(() -> marker.await(Duration.ofMillis(50))).isInstanceOf(SyncTimeoutException.class);
            CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> marker.await(LONG));
            Thread.sleep(20);
            assertThat(waiting).isNotDone();
            gate.complete();
            waiting.get(5, TimeUnit.SECONDS);
            kernel.await(LONG);
            assertThat(marker.isSignaled()).isTrue();
        }
    }

    @Nested
    class Timeouts {
        @Test
        void aTimedOutAwaitThrowsNoEarlierThanItsTimeoutAndFreesItsRegistration() {
            SyncPoint p = track(userEvent().newPoint());
            int before = ClCallbacks.pending();
            Duration timeout = Duration.ofMillis(100);
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> p.await(timeout)).isInstanceOf(SyncTimeoutException.class)
                    .hasMessageContaining("not complete within")
                    .satisfies(e -> assertThat(((SyncException) e).kind()).isEqualTo(ErrorKind.RECOVERABLE));
            assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(timeout.toNanos());
            assertThat(ClCallbacks.pending()).isEqualTo(before);
            assertThat(waiter(p).anchor().isReleased()).isFalse();
        }

        @Test
        void zeroIsAProbeAndSubMillisecondTimeoutsStillWaitAtLeastThatLong() {
            SyncPoint p = track(userEvent().newPoint());
            int before = ClCallbacks.pending();
            assertThatThrownBy(() -> p.await(Duration.ZERO)).isInstanceOf(SyncTimeoutException.class)
                    .hasMessageContaining("0 (probe)");
            for (Duration d : new Duration[] {Duration.ofNanos(1), Duration.ofNanos(1_000), Duration.ofNanos(250_000),
                    Duration.ofNanos(999_999)}) {
                long t0 = System.nanoTime();
                assertThatThrownBy(() -> p.await(d)).isInstanceOf(SyncTimeoutException.class);
                assertThat(System.nanoTime() - t0).as("waited for %s", d).isGreaterThanOrEqualTo(d.toNanos());
            }
            assertThat(ClCallbacks.pending()).isEqualTo(before);
        }

        @Test
        void everyDurationReturnsAtOnceOnACompleteEventAndNegativeOrNullIsRefused() {
            OpenClUserEvent u = userEvent();
            SyncPoint p = track(u.newPoint());
            u.complete();
            for (Duration d : new Duration[] {Duration.ZERO, Duration.ofNanos(1), Duration.ofMillis(1), LONG,
                    SyncPoint.FOREVER, Duration.ofSeconds(Long.MAX_VALUE)}) {
                p.await(d);
            }
            assertThatThrownBy(() -> p.await(Duration.ofNanos(-1))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> p.await(null)).isInstanceOf(NullPointerException.class);
        }

        @Test
        void anInterruptedFiniteAwaitEndsAsCancelledKeepsTheFlagAndFreesItsRegistration() throws Exception {
            SyncPoint p = track(userEvent().newPoint());
            int before = ClCallbacks.pending();
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicReference<Boolean> flag = new AtomicReference<>();
            Thread t = Thread.ofPlatform().start(() -> {
                try {
                    p.await(LONG);
                } catch (Throwable e) {
                    thrown.set(e);
                }
                flag.set(Thread.currentThread().isInterrupted());
            });
            untilRegistered(before);
            t.interrupt();
            t.join(5_000);
            assertThat(thrown.get()).isInstanceOf(SyncCancelledException.class);
            assertThat(flag.get()).isTrue();
            assertThat(ClCallbacks.pending()).isEqualTo(before);
        }
    }

    @Nested
    class Probe {
        @Test
        void isSignaledFollowsTheEventStatusAndIsIdempotent() {
            OpenClUserEvent u = userEvent();
            SyncPoint p = track(u.newPoint());
            for (int i = 0; i < 100; i++) {
                assertThat(p.isSignaled()).isFalse();
            }
            u.complete();
            for (int i = 0; i < 100; i++) {
                assertThat(p.isSignaled()).isTrue();
            }
        }
    }

    @Nested
    class Errors {
        @Test
        void aUserEventFailedWithANegativeStatusMakesEveryWaitThrowThatCodeNeverFalse() {
            OpenClUserEvent u = userEvent();
            SyncPoint p = track(u.newPoint());
            u.fail(-5);
            for (Runnable wait : new Runnable[] {p::isSignaled, () -> p.await(Duration.ZERO),
                    () -> p.await(Duration.ofSeconds(1)), () -> p.await(SyncPoint.FOREVER)}) {
                assertThatThrownBy(wait::run).isInstanceOf(SyncBackendException.class).satisfies(e -> {
                    SyncBackendException be = (SyncBackendException) e;
                    assertThat(be.nativeCode()).isEqualTo(-5);
                    assertThat(be.nativeCodeName()).isEqualTo("CL_OUT_OF_RESOURCES");
                    assertThat(be.kind()).isEqualTo(ErrorKind.RECOVERABLE);
                    assertThat(be.backend()).contains(BackendKind.OPENCL);
                });
            }
            Recorder r = new Recorder();
            assertThat(((SignalCallbackWaiter) p.waiter()).onSignal(r)).isSameAs(CallbackRegistration.DONE);
            assertThat(backendError(r.outcome.join()).nativeCode()).isEqualTo(-5);
        }

        @Test
        void anApplicationDefinedNegativeStatusIsCarriedAsIs() {
            OpenClUserEvent u = userEvent();
            SyncPoint p = track(u.newPoint());
            u.fail(-4242);
            assertThatThrownBy(p::isSignaled).isInstanceOf(SyncBackendException.class)
                    .satisfies(e -> assertThat(((SyncBackendException) e).nativeCode()).isEqualTo(-4242))
                    .satisfies(e -> assertThat(((SyncBackendException) e).nativeCodeName()).isEqualTo("CL_UNKNOWN_ERROR"));
        }

        @Test
        void failuresAfterRegistrationReachListenersAndParkedWaitsPromptly() throws Exception {
            // PoCL 3.1 never calls a CL_COMPLETE callback for a negative status; the sweep covers for it
            OpenClUserEvent u = userEvent();
            SyncPoint p = track(u.newPoint());
            Recorder r = new Recorder();
            ((SignalCallbackWaiter) p.waiter()).onSignal(r);
            int before = ClCallbacks.pending();
            CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> p.await(LONG));
            untilRegistered(before);
            long t0 = System.nanoTime();
            u.fail(-9);
            assertThat(backendError(r.outcome.get(2, TimeUnit.SECONDS)).nativeCode()).isEqualTo(-9);
            assertThatThrownBy(() -> waiting.get(2, TimeUnit.SECONDS))
                    .satisfies(e -> assertThat(backendError(e).nativeCode()).isEqualTo(-9));
            System.out.printf("failure after registration delivered in %.1f ms%n", (System.nanoTime() - t0) / 1e6);
            assertThat(r.calls).hasValue(1);
        }

        @Test
        void aKernelWaitingOnAFailedUserEventFailsWithANegativeCodeAndNeverCompletes() throws Exception {
            OpenClUserEvent gate = userEvent();
            SyncPoint.OpenCl gatePoint = track(gate.newPoint());
            SyncPoint kernel = track(cl.enqueueSpin(1000, gatePoint));
            Recorder r = new Recorder();
            ((SignalCallbackWaiter) kernel.waiter()).onSignal(r);
            gate.fail(-5);
            assertThatThrownBy(() -> kernel.await(LONG)).isInstanceOf(SyncBackendException.class)
                    .satisfies(e -> assertThat(((SyncBackendException) e).nativeCode()).isNegative());
            assertThatThrownBy(() -> kernel.await(SyncPoint.FOREVER)).isInstanceOf(SyncBackendException.class);
            assertThatThrownBy(kernel::isSignaled).isInstanceOf(SyncBackendException.class);
            SyncException delivered = r.outcome.get(2, TimeUnit.SECONDS);
            System.out.println("kernel after a failed dependency: " + delivered.getMessage());
            assertThat(backendError(delivered).nativeCode()).isNegative();
        }

        @Test
        void aUserEventStatusIsSetOnceAndFailureNeedsANegativeStatus() {
            OpenClUserEvent u = userEvent();
            assertThatThrownBy(() -> u.fail(0)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThatThrownBy(() -> u.fail(3)).isInstanceOf(SyncInvalidArgumentException.class);
            u.complete();
            // the spec says a second status is CL_INVALID_OPERATION (PoCL); NVIDIA's driver accepts it silently:
            // whatever the driver answers must surface unchanged, as a SyncBackendException with its name
            try {
                u.complete();
            } catch (SyncBackendException e) {
                assertThat(e.nativeCodeName()).isEqualTo("CL_INVALID_OPERATION");
            }
        }

        @Test
        void invalidHandlesAreRefusedWithAClearExceptionBeforeReachingTheDriver() {
            assertThatThrownBy(() -> OpenClEvents.adopt(MemorySegment.NULL)).isInstanceOf(SyncInvalidArgumentException.class)
                    .hasMessageContaining("NULL");
            assertThatThrownBy(() -> OpenClEvents.borrow(MemorySegment.NULL)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThatThrownBy(() -> OpenClEvents.adopt(0L)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThatThrownBy(() -> OpenClEvents.borrow(0L)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThatThrownBy(() -> OpenClEvents.adopt(MemorySegment.ofArray(new byte[8])))
                    .isInstanceOf(SyncInvalidArgumentException.class).hasMessageContaining("heap");
            assertThatThrownBy(() -> OpenClEvents.adopt((MemorySegment) null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> OpenClUserEvent.create(0L)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThatThrownBy(() -> cl.enqueueSpin(-1)).isInstanceOf(SyncInvalidArgumentException.class);
        }
    }

    @Nested
    class Lifetime {
        @Test
        void aBorrowedEventGetsOneReferenceOfItsOwnReleasedExactlyOnceByClose() {
            OpenClUserEvent u = userEvent();
            MemorySegment ev = u.event();
            int base = refs(ev);
            SyncPoint p = OpenClEvents.borrow(ev);
            assertThat(refs(ev)).isEqualTo(base + 1);
            SyncPoint q = OpenClEvents.borrow(ev.address());
            assertThat(refs(ev)).isEqualTo(base + 2);
            p.waiter().close();
            p.waiter().close();
            assertThat(refs(ev)).isEqualTo(base + 1);
            q.waiter().close();
            assertThat(refs(ev)).isEqualTo(base);
            assertThat(waiter(p).anchor().isReleased()).isTrue();
            assertThatThrownBy(() -> p.await(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(p::isSignaled).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> ((SignalCallbackWaiter) p.waiter()).onSignal(new Recorder()))
                    .isInstanceOf(IllegalStateException.class);
        }

        @Test
        void anOwnedEventTakesOverTheCallersReference() {
            OpenClUserEvent u = userEvent();
            MemorySegment ev = u.event();
            int base = refs(ev);
            Cl.retainEvent(ev, "test"); // the reference the caller hands over
            SyncPoint p = OpenClEvents.adopt(ev.address());
            assertThat(refs(ev)).isEqualTo(base + 1);
            p.waiter().close();
            assertThat(refs(ev)).isEqualTo(base);
        }

        @Test
        void closeDuringAForeverWaitDefersTheReleaseUntilTheWaitReturns() throws Exception {
            closeDuringAWait(SyncPoint.FOREVER);
        }

        @Test
        void closeDuringAFiniteWaitDefersTheReleaseUntilTheWaitReturns() throws Exception {
            closeDuringAWait(LONG);
        }

        private void closeDuringAWait(Duration timeout) throws Exception {
            OpenClUserEvent u = userEvent();
            MemorySegment ev = u.event();
            int base = refs(ev);
            SyncPoint p = OpenClEvents.borrow(ev);
            int before = ClCallbacks.pending();
            CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> p.await(timeout));
            if (timeout == LONG) {
                untilRegistered(before);
            } else {
                Thread.sleep(50);
            }
            p.waiter().close();
            assertThat(refs(ev)).as("released while a wait is in progress").isEqualTo(base + 1);
            assertThat(waiter(p).anchor().isReleased()).isFalse();
            u.complete();
            waiting.get(5, TimeUnit.SECONDS);
            // the last hold may be the callback's registration, dropped inside the driver's callback: the
            // clReleaseEvent then runs on the housekeeping thread a moment later, never inside the callback
            eventually("the release after the wait", () -> refs(ev) == base);
            assertThat(waiter(p).anchor().isReleased()).isTrue();
        }

        @Test
        void aPendingRegistrationKeepsTheEventAliveAndItsReleaseLeavesTheCallbackThread() throws Exception {
            OpenClUserEvent u = userEvent();
            MemorySegment ev = u.event();
            int base = refs(ev);
            SyncPoint p = OpenClEvents.borrow(ev);
            Recorder r = new Recorder();
            ((SignalCallbackWaiter) p.waiter()).onSignal(r);
            p.waiter().close();
            assertThat(refs(ev)).isEqualTo(base + 1);
            u.complete(); // the callback drops the last hold (inside clSetUserEventStatus on PoCL)
            eventually("the callback", () -> r.calls.get() == 1);
            assertThat(waiter(p).anchor().isReleased()).isTrue();
            eventually("the deferred clReleaseEvent", () -> refs(ev) == base);
        }

        @Test
        void aCancelledRegistrationDropsItsHold() {
            OpenClUserEvent u = userEvent();
            MemorySegment ev = u.event();
            int base = refs(ev);
            SyncPoint p = OpenClEvents.borrow(ev);
            CallbackRegistration reg = ((SignalCallbackWaiter) p.waiter()).onSignal(new Recorder());
            p.waiter().close();
            assertThat(refs(ev)).isEqualTo(base + 1);
            reg.cancel();
            assertThat(refs(ev)).isEqualTo(base);
            reg.cancel();
            assertThat(refs(ev)).isEqualTo(base);
        }

        @Test
        void aForgottenWaiterReleasesItsReferenceWhenCollected() throws Exception {
            OpenClUserEvent u = userEvent();
            MemorySegment ev = u.event();
            int base = refs(ev);
            forget(ev);
            assertThat(refs(ev)).isEqualTo(base + 1);
            long deadline = System.nanoTime() + LONG.toNanos();
            while (refs(ev) != base && System.nanoTime() < deadline) {
                System.gc();
                Thread.sleep(10);
            }
            assertThat(refs(ev)).isEqualTo(base);
        }

        private static void forget(MemorySegment ev) {
            assertThat(OpenClEvents.borrow(ev).isSignaled()).isFalse();
        }

        @Test
        void pointsOfAUserEventOutliveTheUserEventObject() {
            OpenClUserEvent u = cl.newUserEvent();
            SyncPoint p = track(u.newPoint());
            u.complete();
            u.close();
            u.close();
            assertThat(p.isSignaled()).isTrue();
            assertThatThrownBy(u::newPoint).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(u::complete).isInstanceOf(IllegalStateException.class);
        }
    }

    @Nested
    class CallbackRegistrations {
        @Test
        void aListenerFiresExactlyOnce() throws Exception {
            OpenClUserEvent u = userEvent();
            SyncPoint p = track(u.newPoint());
            Recorder r = new Recorder();
            ((SignalCallbackWaiter) p.waiter()).onSignal(r);
            u.complete();
            Thread.sleep(3 * ClCallbacks.SWEEP_MILLIS_DEFAULT); // a sweep must not fire it again
            assertThat(r.calls).hasValue(1);
        }

        @Test
        void aCancelledListenerNeverFires() throws Exception {
            OpenClUserEvent u = userEvent();
            SyncPoint p = track(u.newPoint());
            int before = ClCallbacks.pending();
            Recorder r = new Recorder();
            CallbackRegistration reg = ((SignalCallbackWaiter) p.waiter()).onSignal(r);
            assertThat(ClCallbacks.pending()).isEqualTo(before + 1);
            reg.cancel();
            assertThat(ClCallbacks.pending()).isEqualTo(before);
            u.complete();
            Thread.sleep(3 * ClCallbacks.SWEEP_MILLIS_DEFAULT);
            assertThat(r.calls).hasValue(0);
        }

        @Test
        void aListenerOnACompleteEventRunsSynchronously() {
            OpenClUserEvent u = userEvent();
            SyncPoint p = track(u.newPoint());
            u.complete();
            Recorder r = new Recorder();
            CallbackRegistration reg = ((SignalCallbackWaiter) p.waiter()).onSignal(r);
            assertThat(r.calls).hasValue(1);
            assertThat(r.thread).isSameAs(Thread.currentThread());
            assertThat(reg).isSameAs(CallbackRegistration.DONE);
        }

        @Test
        void tenThousandListenersOnOneUserEventAllFireOnce() {
            tenThousand(userEvent(), null);
        }

        @Test
        void tenThousandListenersOnOneKernelEventAllFireOnce() {
            tenThousand(null, track(cl.enqueueSpin(300_000_000)));
        }

        private void tenThousand(OpenClUserEvent u, SyncPoint kernel) {
            SyncPoint p = u != null ? track(u.newPoint()) : kernel;
            int before = ClCallbacks.pending();
            AtomicInteger signalled = new AtomicInteger();
            AtomicInteger failed = new AtomicInteger();
            SignalListener l = new SignalListener() {
                @Override
                public void signalled() {
                    signalled.incrementAndGet();
                }

                @Override
                public void failed(SyncException error) {
                    failed.incrementAndGet();
                }
            };
            long t0 = System.nanoTime();
            int registered = 0;
            for (int i = 0; i < 10_000; i++) {
                if (((SignalCallbackWaiter) p.waiter()).onSignal(l) != CallbackRegistration.DONE) {
                    registered++;
                }
            }
            long t1 = System.nanoTime();
            if (u != null) {
                u.complete();
            }
            p.await(LONG);
            try {
                eventually("10,000 listeners", () -> signalled.get() == 10_000);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            long t2 = System.nanoTime();
            assertThat(failed).hasValue(0);
            assertThat(ClCallbacks.pending()).isEqualTo(before);
            System.out.printf("10,000 registrations (%d via the driver) on a %s event: register %.1f µs each, all fired %.1f ms after%n",
                    registered, u != null ? "user" : "kernel", (t1 - t0) / 1e3 / 10_000, (t2 - t1) / 1e6);
        }
    }
}
