package io.gpusync.cpu;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CpuTimelineTest {

    @Test
    void aPointIsSignalledOnceTheTimelineReachesItsValue() {
        CpuTimeline timeline = new CpuTimeline();
        SyncPoint p = timeline.at(3);
        assertThat(p).isInstanceOf(SyncPoint.HostTimeline.class);
        assertThat(p.backend()).isEqualTo(BackendKind.CPU);
        assertThat(p.isSignaled()).isFalse();
        timeline.signal(2);
        assertThat(p.isSignaled()).isFalse();
        timeline.signal(5);
        assertThat(p.isSignaled()).isTrue();
        p.await(Duration.ZERO);
        assertThat(timeline.value()).isEqualTo(5);
    }

    @Test
    void aBlockedWaiterWakesWhenSignalledFromAnotherThread() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        SyncPoint p = timeline.at(1);
        CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> p.await(Duration.ofSeconds(10)));
        while (timeline.pendingWaits() == 0) {
            Thread.onSpinWait();
        }
        assertThat(waiting).isNotDone();
        timeline.signal(1);
        waiting.get(5, TimeUnit.SECONDS);
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void aTimedOutWaitThrowsNoEarlierThanItsTimeoutAndLeavesNothingRegistered() {
        CpuTimeline timeline = new CpuTimeline();
        Duration timeout = Duration.ofMillis(100);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> timeline.at(1).await(timeout)).isInstanceOf(SyncTimeoutException.class)
                .hasMessageContaining("did not reach 1");
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(timeout.toNanos());
        assertThat(timeline.pendingWaits()).isZero();
        assertThatThrownBy(() -> timeline.at(1).await(Duration.ZERO)).isInstanceOf(SyncTimeoutException.class);
    }

    @Test
    void aSignalBelowTheCurrentValueIsANoOpAndTheTimelineNeverGoesBackwards() {
        CpuTimeline timeline = new CpuTimeline();
        SyncPoint eleven = timeline.at(11);
        timeline.signal(10);
        timeline.signal(10);
        timeline.signal(9); // a late signal of an earlier value: already reached
        assertThat(timeline.value()).isEqualTo(10);
        assertThat(timeline.at(9).isSignaled()).isTrue();
        assertThat(eleven.isSignaled()).isFalse();
        assertThat(timeline.pendingWaits()).isZero(); // isSignaled registers nothing
        timeline.signal(11);
        assertThat(eleven.isSignaled()).isTrue();
    }

    @Test
    void signalsRacingFromSeveralThreadsLeaveTheHighestValueAndCompleteEveryWait() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        int n = 1_000;
        List<CompletableFuture<Void>> waits = new ArrayList<>();
        try (var waiters = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            for (int v = 1; v <= n; v++) {
                long value = v;
                waits.add(CompletableFuture.runAsync(() -> timeline.at(value).await(Duration.ofSeconds(60)), waiters));
            }
            try (var signallers = java.util.concurrent.Executors.newFixedThreadPool(4)) {
                for (int v = n; v >= 1; v--) { // highest first: most later signals are below the value
                    long value = v;
                    signallers.execute(() -> timeline.signal(value));
                }
            }
            CompletableFuture.allOf(waits.toArray(new CompletableFuture[0])).get(90, TimeUnit.SECONDS);
        }
        assertThat(timeline.value()).isEqualTo(n);
    }

    @Test
    void valuesAreUnsignedUpTo2To64Minus1() {
        long high = 0x8000_0000_0000_0000L; // 2^63, negative as a signed long
        CpuTimeline timeline = new CpuTimeline(Long.MAX_VALUE);
        SyncPoint p = timeline.at(high);
        assertThat(p.isSignaled()).isFalse();
        timeline.signal(high);
        assertThat(p.isSignaled()).isTrue();
        assertThat(timeline.at(-1L).isSignaled()).isFalse(); // 2^64 - 1
        timeline.signal(-1L);
        assertThat(timeline.at(-1L).isSignaled()).isTrue();
        timeline.signal(Long.MAX_VALUE); // below 2^64 - 1 unsigned: a no-op
        assertThat(timeline.value()).isEqualTo(-1L);
    }

    @Test
    void failFailsPendingAndLaterWaitsWithTheCause() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        AtomicReference<SyncException> seen = new AtomicReference<>();
        CompletableFuture<Void> blocked = CompletableFuture.runAsync(() -> timeline.at(1).await(SyncPoint.FOREVER));
        ((SignalCallbackWaiter) timeline.at(2).waiter()).onSignal(listener(null, seen));
        while (timeline.pendingWaits() < 2) {
            Thread.onSpinWait();
        }
        timeline.fail(new IllegalStateException("GPU fell off the bus"));

        assertThat(blocked).failsWithin(5, TimeUnit.SECONDS).withThrowableThat()
                .havingCause().isInstanceOf(DeviceLostException.class).withMessageContaining("fell off the bus");
        assertThat(seen.get()).isInstanceOf(DeviceLostException.class);
        assertThat(seen.get().kind()).isEqualTo(ErrorKind.FATAL);
        assertThatThrownBy(() -> timeline.at(0).isSignaled()).isInstanceOf(DeviceLostException.class);
        assertThatThrownBy(() -> timeline.signal(5)).isInstanceOf(DeviceLostException.class);
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void aSyncExceptionGivenToFailPropagatesUnchanged() {
        CpuTimeline timeline = new CpuTimeline();
        var cause = new SyncInvalidArgumentException(BackendKind.CPU, "bad submit");
        timeline.fail(cause);
        assertThatThrownBy(() -> timeline.at(1).await(Duration.ofSeconds(1))).isSameAs(cause);
    }

    @Test
    void callbacksFireOnTheSignallingThreadWithNoThreadWaiting() {
        CpuTimeline timeline = new CpuTimeline();
        var waiter = (SignalCallbackWaiter) timeline.at(5).waiter();
        assertThat(waiter).isInstanceOf(BlockingWaiter.class);
        List<Thread> firedOn = new ArrayList<>();
        waiter.onSignal(listener(firedOn, null));
        assertThat(timeline.pendingWaits()).isEqualTo(1);
        timeline.signal(5);
        assertThat(firedOn).containsExactly(Thread.currentThread());
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void aCallbackOnAReachedValueRunsSynchronously() {
        CpuTimeline timeline = new CpuTimeline(9);
        List<Thread> firedOn = new ArrayList<>();
        CallbackRegistration r = ((SignalCallbackWaiter) timeline.at(5).waiter()).onSignal(listener(firedOn, null));
        assertThat(r).isSameAs(CallbackRegistration.DONE);
        assertThat(firedOn).hasSize(1);
    }

    @Test
    void aCancelledCallbackNeverFiresAndLeavesNoRegistration() {
        CpuTimeline timeline = new CpuTimeline();
        List<Thread> firedOn = new ArrayList<>();
        var waiter = (SignalCallbackWaiter) timeline.at(1).waiter();
        for (int i = 0; i < 10_000; i++) {
            waiter.onSignal(listener(firedOn, null)).cancel();
        }
        assertThat(timeline.pendingWaits()).isZero();
        timeline.signal(1);
        assertThat(firedOn).isEmpty();
    }

    @Test
    void rebindWaitsOnTheSameTimelineAtTheNewValue() {
        CpuTimeline timeline = new CpuTimeline();
        SyncPoint p1 = timeline.at(1);
        SyncPoint p7 = p1.withValue(7);
        assertThat(((SyncPoint.HostTimeline) p7).value()).isEqualTo(7);
        assertThat(((SyncPoint.HostTimeline) p7).timeline()).isSameAs(timeline);
        timeline.signal(1);
        assertThat(p1.isSignaled()).isTrue();
        assertThat(p7.isSignaled()).isFalse(); // carried nothing over from value 1
        timeline.signal(7);
        assertThat(p7.isSignaled()).isTrue();
    }

    @Test
    void manyWaitersOnManyValuesAllWake() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        int n = 64;
        CountDownLatch done = new CountDownLatch(n);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long v = i % 8 + 1;
            threads.add(Thread.ofVirtual().start(() -> {
                timeline.at(v).await(Duration.ofSeconds(10));
                done.countDown();
            }));
        }
        for (long v = 1; v <= 8; v++) {
            timeline.signal(v);
        }
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(timeline.pendingWaits()).isZero();
    }

    private static SignalListener listener(List<Thread> firedOn, AtomicReference<SyncException> failed) {
        return new SignalListener() {
            @Override
            public void signalled() {
                firedOn.add(Thread.currentThread());
            }

            @Override
            public void failed(SyncException error) {
                failed.set(error);
            }
        };
    }

    @Test
    void aThrowingListenerStrandsNoOtherWaitAndSignalReportsItAfterAllRan() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        SyncPoint p = timeline.at(1);
        CompletableFuture<Void> blocked = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                p.await(Duration.ofSeconds(30));
                blocked.complete(null);
            } catch (Throwable t) {
                blocked.completeExceptionally(t);
            }
        });
        while (timeline.pendingWaits() == 0) {
            Thread.onSpinWait();
        }
        SignalCallbackWaiter callbacks = (SignalCallbackWaiter) p.waiter();
        List<String> heard = new ArrayList<>();
        SignalListener throwing = new SignalListener() {
            @Override
            public void signalled() {
                throw new IllegalStateException("a subscriber's bug");
            }

            @Override
            public void failed(SyncException error) {
                throw new IllegalStateException("a subscriber's bug");
            }
        };
        callbacks.onSignal(throwing);
        callbacks.onSignal(recording(heard, "other"));
        callbacks.onSignal(throwing);
        ((SignalCallbackWaiter) timeline.at(1).waiter()).onSignal(recording(heard, "same value, other waiter"));

        assertThatThrownBy(() -> timeline.signal(1)).isInstanceOf(IllegalStateException.class)
                .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));
        assertThat(heard).containsExactlyInAnyOrder("other", "same value, other waiter");
        blocked.get(5, TimeUnit.SECONDS);
        assertThat(timeline.value()).isEqualTo(1);
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void anInterruptedAwaitThrowsSyncCancelledAtOnceAndKeepsTheFlag() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        CompletableFuture<Boolean> flag = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().daemon().start(() -> {
            Thread.currentThread().interrupt();
            try {
                timeline.at(1).await(Duration.ofSeconds(30));
                flag.completeExceptionally(new AssertionError("returned"));
            } catch (SyncCancelledException expected) {
                flag.complete(Thread.currentThread().isInterrupted());
            } catch (Throwable other) {
                flag.completeExceptionally(other);
            }
        });
        assertThat(flag.get(5, TimeUnit.SECONDS)).as("interrupt flag kept").isTrue();
        t.join();
        assertThat(timeline.pendingWaits()).as("nothing left registered").isZero();
    }

    private static SignalListener recording(List<String> heard, String name) {
        return new SignalListener() {
            @Override
            public void signalled() {
                synchronized (heard) {
                    heard.add(name);
                }
            }

            @Override
            public void failed(SyncException error) {
                synchronized (heard) {
                    heard.add(name + " failed");
                }
            }
        };
    }
}
