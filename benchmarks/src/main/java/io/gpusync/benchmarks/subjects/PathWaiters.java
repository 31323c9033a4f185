package io.gpusync.benchmarks.subjects;

import io.gpusync.BackendKind;
import io.gpusync.SyncException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.kit.ProbeLoop;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import io.gpusync.spi.WaitSet;
import io.gpusync.spi.WaitSetMember;
import io.gpusync.spi.WakeableWaiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Waiters over a host-timeline waiter that advertise exactly one ability each, so the engine serves the
 * same primitive by a chosen {@link io.gpusync.reactor.WaitPath} (the idea of the reactor-adapter tests'
 * {@code HostWaiters}, as benchmark subjects). {@code await} of each is the inner waiter's parking wait,
 * except {@link #probeOnly}, whose blocking wait is {@link ProbeLoop} (spin, yield, sleep) — what a
 * probe-only API offers.
 */
public final class PathWaiters {
    private PathWaiters() {
    }

    /** Only {@link SyncWaiter#isSignaled()}: the probe path. */
    public static SyncWaiter probeOnly(SyncWaiter inner) {
        return new ProbeOnly(inner);
    }

    /**
     * A parking blocking wait, no callback: the blocking (waiter-pool) path. Wakeable (it forwards
     * {@link WakeableWaiter#wakeWaiters()}) when {@code inner} is, as a host timeline's waiter is, so the
     * engine frees a cancelled wait's thread at once.
     */
    public static SyncWaiter blockingOnly(SyncWaiter inner) {
        return inner instanceof WakeableWaiter wakeable ? new WakeableBlockingOnly(wakeable) : new BlockingOnly(inner);
    }

    /** A member of {@code set}: the wait-set path. {@code inner} must be a callback waiter (a host timeline's). */
    public static SyncWaiter member(HostWaitSet set, SyncWaiter inner) {
        return new Member(set, (SignalCallbackWaiter) inner);
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

    record ProbeOnly(SyncWaiter inner) implements Forwarding {
        @Override
        public void await(Duration timeout) {
            ProbeLoop.await(this, timeout); // probes only: never the inner waiter's own wait
        }
    }

    record BlockingOnly(SyncWaiter inner) implements Forwarding, BlockingWaiter {
        @Override
        public java.util.concurrent.Executor waitThreads() {
            return inner instanceof BlockingWaiter b ? b.waitThreads() : null;
        }
    }

    record WakeableBlockingOnly(WakeableWaiter inner) implements Forwarding, WakeableWaiter {
        @Override
        public void wakeWaiters() {
            inner.wakeWaiters();
        }

        @Override
        public void await(Duration timeout, java.util.function.BooleanSupplier abandoned) {
            inner.await(timeout, abandoned);
        }
    }

    record Member(HostWaitSet set, SignalCallbackWaiter inner) implements Forwarding, WaitSetMember {
        @Override
        public WaitSet waitSet() {
            return set;
        }
    }

    /**
     * A wait set over host timelines, modelled on a Vulkan device's {@code vkWaitSemaphores(WAIT_ANY)}:
     * {@code awaitAny} registers a callback on every member's timeline that unparks the waiting thread,
     * parks up to the slice, then deregisters; {@link #wakeUp()} unparks it.
     */
    public static final class HostWaitSet implements WaitSet {
        private volatile Thread blocked;
        private volatile boolean woken;

        @Override
        public void awaitAny(List<? extends WaitSetMember> members, Duration slice) {
            Thread me = Thread.currentThread();
            blocked = me;
            List<CallbackRegistration> regs = new ArrayList<>(members.size());
            SignalListener unpark = new SignalListener() {
                @Override
                public void signalled() {
                    LockSupport.unpark(me);
                }

                @Override
                public void failed(SyncException error) {
                    LockSupport.unpark(me);
                }
            };
            try {
                for (WaitSetMember m : members) {
                    regs.add(((Member) m).inner().onSignal(unpark));
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
            woken = true;
            Thread t = blocked;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }
}
