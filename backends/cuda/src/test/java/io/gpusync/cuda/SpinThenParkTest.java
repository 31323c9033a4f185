package io.gpusync.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

/** The CUDA waiters' wait loop and its duration mapping, with fake probes (no GPU). */
class SpinThenParkTest {
    private static final long MS = 1_000_000L;

    /** A target signalled at a given time; its arm unparks like a stream callback would. */
    static final class Fake implements SpinThenPark.Target {
        final long signalAt;
        final AtomicInteger probes = new AtomicInteger();
        final AtomicInteger arms = new AtomicInteger();
        final boolean canArm;
        volatile boolean cancelled;

        volatile io.gpusync.SyncException failure;

        Fake(long inNanos, boolean canArm) {
            this.signalAt = inNanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + inNanos;
            this.canArm = canArm;
        }

        @Override
        public boolean probe() {
            probes.incrementAndGet();
            return signalAt != Long.MAX_VALUE && System.nanoTime() - signalAt >= 0;
        }

        @Override
        public SpinThenPark.Armed arm(Thread thread) {
            arms.incrementAndGet();
            if (!canArm) {
                return null;
            }
            AtomicBoolean fired = new AtomicBoolean();
            if (signalAt != Long.MAX_VALUE) {
                Thread.ofPlatform().daemon().start(() -> {
                    LockSupport.parkNanos(Math.max(0, signalAt - System.nanoTime()));
                    fired.set(true);
                    LockSupport.unpark(thread);
                });
            }
            return new SpinThenPark.Armed() {
                @Override
                public boolean fired() {
                    return fired.get();
                }

                @Override
                public io.gpusync.SyncException failure() {
                    return failure;
                }

                @Override
                public void cancel() {
                    cancelled = true;
                }
            };
        }
    }

    private static void await(Fake f, Duration timeout) {
        SpinThenPark.await(f, timeout, BackendKind.CUDA, () -> "fake");
    }

    @Test
    void aFailedWakeUpEndsAForeverWaitAtOnceWithItsError() throws Exception {
        Fake never = new Fake(Long.MAX_VALUE, true);
        io.gpusync.DeviceLostException lost = new io.gpusync.DeviceLostException(BackendKind.CUDA, "sticky error");
        java.util.concurrent.CompletableFuture<Throwable> outcome = new java.util.concurrent.CompletableFuture<>();
        Thread waiter = Thread.ofPlatform().start(() -> {
            try {
                await(never, io.gpusync.SyncPoint.FOREVER);
                outcome.complete(null);
            } catch (Throwable t) {
                outcome.complete(t);
            }
        });
        while (never.arms.get() == 0) {
            Thread.sleep(1);
        }
        never.failure = lost; // what the fault watch does through the slot ...
        LockSupport.unpark(waiter); // ... and the unpark that comes with it
        assertThat(outcome.get(5, java.util.concurrent.TimeUnit.SECONDS)).isSameAs(lost);
        assertThat(never.cancelled).as("the armed wake-up is withdrawn").isTrue();
    }

    @Test
    void zeroIsOneProbeAndNegativeIsRejected() {
        Fake never = new Fake(Long.MAX_VALUE, true);
        assertThatThrownBy(() -> await(never, Duration.ZERO)).isInstanceOf(SyncTimeoutException.class)
                .hasMessageContaining("0 (probe)");
        assertThat(never.probes.get()).isOne();
        assertThat(never.arms.get()).isZero();
        assertThatThrownBy(() -> await(never, Duration.ofNanos(-1))).isInstanceOf(IllegalArgumentException.class);
        Fake done = new Fake(0, true);
        await(done, Duration.ZERO);
    }

    @Test
    void aTinyTimeoutStillWaitsAndNeverEndsEarly() {
        Fake never = new Fake(Long.MAX_VALUE, true);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> await(never, Duration.ofNanos(1))).isInstanceOf(SyncTimeoutException.class);
        assertThat(never.probes.get()).as("probed after the first check, not treated as 'do not wait'").isGreaterThan(1);
        t0 = System.nanoTime();
        assertThatThrownBy(() -> await(new Fake(Long.MAX_VALUE, true), Duration.ofMillis(20)))
                .isInstanceOf(SyncTimeoutException.class).hasMessageContaining("0.02s");
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(20 * MS);
    }

    @Test
    void shortWaitsEndInTheSpinAndLongOnesParkUntilTheWakeUp() {
        Fake soon = new Fake(20_000, true); // 20 µs: inside the 50 µs spin
        await(soon, Duration.ofSeconds(5));
        assertThat(soon.arms.get()).isZero();

        Fake later = new Fake(30 * MS, true);
        long t0 = System.nanoTime();
        await(later, SyncPoint.FOREVER);
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(29 * MS);
        assertThat(later.arms.get()).isOne();
        assertThat(later.cancelled).as("the wake-up is always withdrawn").isTrue();
        assertThat(later.probes.get()).as("parked, not spinning").isLessThan(1_000);

        Fake noArm = new Fake(10 * MS, false); // no stream callback: probe with a park backoff
        await(noArm, Duration.ofSeconds(5));
        assertThat(noArm.arms.get()).isOne();
    }

    @Test
    void interruptCancelsAndProbeErrorsEndTheWait() {
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> await(new Fake(Long.MAX_VALUE, true), Duration.ofSeconds(5)))
                    .isInstanceOf(SyncCancelledException.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        Thread waiter = Thread.currentThread();
        Thread.ofPlatform().daemon().start(() -> {
            LockSupport.parkNanos(5 * MS);
            waiter.interrupt();
        });
        try {
            assertThatThrownBy(() -> await(new Fake(Long.MAX_VALUE, true), SyncPoint.FOREVER))
                    .isInstanceOf(SyncCancelledException.class);
        } finally {
            Thread.interrupted();
        }
        AtomicInteger n = new AtomicInteger();
        SpinThenPark.Target dies = new SpinThenPark.Target() {
            @Override
            public boolean probe() {
                if (n.incrementAndGet() > 3) {
                    throw new DeviceLostException(BackendKind.CUDA, "sticky");
                }
                return false;
            }

            @Override
            public SpinThenPark.Armed arm(Thread thread) {
                return null;
            }
        };
        assertThatThrownBy(() -> SpinThenPark.await(dies, SyncPoint.FOREVER, BackendKind.CUDA, () -> "x"))
                .isInstanceOf(DeviceLostException.class);
    }

    @Test
    void slicesDoubleUpToTheirCap() {
        assertThat(SpinThenPark.nextSlice(SpinThenPark.ARMED_FIRST_SLICE_NANOS, SpinThenPark.ARMED_MAX_SLICE_NANOS))
                .isEqualTo(2 * MS);
        assertThat(SpinThenPark.nextSlice(40 * MS, 64 * MS)).isEqualTo(64 * MS);
        assertThat(SpinThenPark.nextSlice(64 * MS, 64 * MS)).isEqualTo(64 * MS);
        assertThat(SpinThenPark.nextSlice(Long.MAX_VALUE / 2 + 1, Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
    }
}
