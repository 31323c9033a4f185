package io.gpusync.reactor;

import io.gpusync.BackendKind;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.kit.ProbeLoop;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import io.gpusync.spi.WaitSet;
import io.gpusync.spi.WaitSetMember;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Waiters over host timelines that advertise exactly one ability each, so every engine path can be driven
 * by a real signal (a {@code CpuTimeline}) without a GPU. Driver backends are tested against real drivers
 * in their own tests.
 */
final class HostWaiters {
    private HostWaiters() {
    }

    /** Only {@link SyncWaiter#isSignaled()}: served by the probe path. */
    static SyncWaiter probeOnly(SyncPoint point) {
        return new ProbeOnly(point.waiter());
    }

    /** A native-style blocking wait (parks in the timeline), no callback: served by the waiter pool. */
    static SyncWaiter blockingOnly(SyncPoint point) {
        return new BlockingOnly(point.waiter());
    }

    /**
     * {@link #blockingOnly} that can be woken ({@link io.gpusync.spi.WakeableWaiter}, forwarded to the host
     * timeline's waiter): served by the waiter pool, which wakes it when the wait ends unsignalled.
     */
    static SyncWaiter wakeableBlocking(SyncPoint point) {
        return new WakeableBlocking((io.gpusync.spi.WakeableWaiter) point.waiter());
    }

    /** A member of {@code set}: served by the wait-set path. */
    static SyncWaiter member(HostWaitSet set, SyncPoint point) {
        return new Member(set, point.waiter());
    }

    /** A memory-read probe that can also call back: spun on, then handed to the callback path. */
    static SyncWaiter cheapProbeWithCallback(SyncPoint point) {
        return new CheapWithCallback((SignalCallbackWaiter) point.waiter());
    }

    /**
     * {@link #cheapProbeWithCallback} whose callbacks arrive {@code lateNanos} after the signal, on another thread:
     * the status is seen at once by a probe, the listener runs late — as NVIDIA's OpenCL delivers
     * {@code clSetEventCallback} 120–240 µs after the status changes.
     */
    static SyncWaiter cheapProbeWithLateCallback(SyncPoint point, long lateNanos,
                                                 java.util.concurrent.ScheduledExecutorService driverThread) {
        return new CheapWithLateCallback((SignalCallbackWaiter) point.waiter(), lateNanos, driverThread);
    }

    /**
     * A callback waiter that says its listeners may run on a driver-owned thread (as OpenCL's and CUDA's
     * do), so the engine hands its completions to an event loop.
     */
    static SyncWaiter driverCallback(SyncPoint point) {
        return new DriverCallback((SignalCallbackWaiter) point.waiter());
    }

    /** {@link #blockingOnly} that records the name of every thread that probes or waits on it. */
    static SyncWaiter recordingBlocking(SyncPoint point, java.util.Collection<String> threads) {
        return new RecordingBlocking(point.waiter(), threads, null);
    }

    /**
     * {@link #recordingBlocking} whose engine waits run on {@code lender}'s threads
     * ({@link BlockingWaiter#waitThreads()}).
     */
    static SyncWaiter lendingBlocking(SyncWaiter inner, java.util.Collection<String> threads,
                                      java.util.concurrent.Executor lender) {
        return new RecordingBlocking(inner, threads, lender);
    }

    /** A waiter that forwards {@code await}, {@code isSignaled} and {@code backend} to the one it wraps. */
    interface Forwarding extends SyncWaiter {
        SyncWaiter inner();

        @Override
        default void await(Duration timeout) {
            inner().await(timeout);
        }

        @Override
        default boolean isSignaled() {
            return inner().isSignaled();
        }

        @Override
        default BackendKind backend() {
            return inner().backend();
        }
    }

    record DriverCallback(SignalCallbackWaiter inner) implements Forwarding, SignalCallbackWaiter {

        @Override
        public CallbackRegistration onSignal(SignalListener listener) {
            return inner.onSignal(listener);
        }
    }

    record RecordingBlocking(SyncWaiter inner, java.util.Collection<String> threads,
                             java.util.concurrent.Executor waitThreads) implements BlockingWaiter {
        @Override
        public void await(Duration timeout) {
            threads.add(Thread.currentThread().getName());
            inner.await(timeout);
        }

        @Override
        public boolean isSignaled() {
            threads.add(Thread.currentThread().getName());
            return inner.isSignaled();
        }

        @Override
        public BackendKind backend() {
            return inner.backend();
        }
    }

    record CheapWithCallback(SignalCallbackWaiter inner) implements Forwarding, io.gpusync.spi.CheapProbe, SignalCallbackWaiter {

        @Override
        public CallbackRegistration onSignal(SignalListener listener) {
            return inner.onSignal(listener);
        }
    }

    record CheapWithLateCallback(SignalCallbackWaiter inner, long lateNanos,
                                 java.util.concurrent.ScheduledExecutorService driverThread)
            implements Forwarding, io.gpusync.spi.CheapProbe, SignalCallbackWaiter {

        @Override
        public boolean callsBackOnDriverThread() {
            return true;
        }

        @Override
        public CallbackRegistration onSignal(SignalListener listener) {
            java.util.concurrent.atomic.AtomicBoolean cancelled = new java.util.concurrent.atomic.AtomicBoolean();
            CallbackRegistration r = inner.onSignal(new SignalListener() {
                @Override
                public void signalled() {
                    driverThread.schedule(() -> {
                        if (!cancelled.get()) {
                            listener.signalled();
                        }
                    }, lateNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
                }

                @Override
                public void failed(io.gpusync.SyncException error) {
                    listener.failed(error);
                }
            });
            return () -> {
                cancelled.set(true);
                r.cancel();
            };
        }
    }

    record ProbeOnly(SyncWaiter inner) implements Forwarding {
        @Override
        public void await(Duration timeout) {
            ProbeLoop.await(this, timeout); // probes only: never the inner waiter's own wait
        }
    }

    record BlockingOnly(SyncWaiter inner) implements Forwarding, BlockingWaiter {
    }

    record WakeableBlocking(io.gpusync.spi.WakeableWaiter inner) implements Forwarding, io.gpusync.spi.WakeableWaiter {
        @Override
        public void wakeWaiters() {
            inner.wakeWaiters();
        }

        @Override
        public void await(Duration timeout, java.util.function.BooleanSupplier abandoned) {
            inner.await(timeout, abandoned);
        }
    }

    record Member(HostWaitSet set, SyncWaiter inner) implements Forwarding, WaitSetMember {
        @Override
        public WaitSet waitSet() {
            return set;
        }
    }

    /**
     * A wait set over host timelines: {@code awaitAny} parks until a member's timeline callback or
     * {@link #wakeUp()} unparks it; counts its waits and wake-ups.
     */
    static final class HostWaitSet implements WaitSet {
        final AtomicInteger awaits = new AtomicInteger();
        final AtomicInteger wakeUps = new AtomicInteger();
        private volatile Thread blocked;
        private volatile boolean woken;

        @Override
        public void awaitAny(List<? extends WaitSetMember> members, Duration slice) {
            awaits.incrementAndGet();
            Thread me = Thread.currentThread();
            blocked = me;
            List<CallbackRegistration> regs = new ArrayList<>();
            SignalListener unpark = new SignalListener() {
                @Override
                public void signalled() {
                    LockSupport.unpark(me);
                }

                @Override
                public void failed(io.gpusync.SyncException error) {
                    LockSupport.unpark(me);
                }
            };
            try {
                for (WaitSetMember m : members) {
                    regs.add(((SignalCallbackWaiter) ((Member) m).inner()).onSignal(unpark));
                }
                if (!woken) {
                    LockSupport.parkNanos(this, slice.toNanos());
                }
            } finally {
                regs.forEach(CallbackRegistration::cancel);
                woken = false;
                blocked = null;
            }
        }

        @Override
        public void wakeUp() {
            wakeUps.incrementAndGet();
            woken = true;
            Thread t = blocked;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }
}
