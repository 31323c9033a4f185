package io.gpusync.linux;

import io.gpusync.BackendKind;
import io.gpusync.SyncTimeoutException;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.ReadableFdWaiter;
import io.gpusync.spi.Timeouts;
import io.gpusync.kit.WaitLoop;

import java.time.Duration;

/**
 * The waiter of a {@link io.gpusync.SyncPoint.SyncFd}: signalled when its fd is readable. {@link #await}
 * blocks in {@code poll(2)} slices of at most {@link WaitLoop#INTERRUPT_CHECK_NANOS} (EINTR-safe, millisecond
 * granularity rounded up) through the {@link WaitLoop}, so an interrupted thread ends its wait with
 * {@link io.gpusync.SyncCancelledException} within one slice and keeps its flag; {@link #isSignaled()} polls
 * with 0. A hang-up without data or an error condition on the fd fails the wait (FATAL), never a timeout. Engines watch {@link #leaseReadableFd()} with epoll instead. Thread-safe; the fd is closed (if
 * owned) once this waiter is closed or unreachable and no wait is in progress.
 */
final class SyncFdWaiter implements ReadableFdWaiter, BlockingWaiter {
    private final int fd;
    private final NativeAnchor.Claim claim;

    SyncFdWaiter(int fd, NativeAnchor anchor) {
        this.fd = fd;
        this.claim = anchor.claim(this);
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        claim.run(() -> WaitLoop.await(timeout, WaitLoop.INTERRUPT_CHECK_NANOS, nanos -> FdPoll.readable(fd, nanos),
                this, () -> new SyncTimeoutException(BackendKind.LINUX,
                        "fd " + fd + " not readable within " + Timeouts.describe(timeout))));
    }

    @Override
    public boolean isSignaled() {
        return claim.call(() -> FdPoll.readable(fd, 0));
    }

    @Override
    public BackendKind backend() {
        return BackendKind.LINUX;
    }

    @Override
    public FdLease leaseReadableFd() {
        claim.enter();
        return new FdLease() {
            private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

            @Override
            public int fd() {
                return fd;
            }

            @Override
            public void close() {
                if (closed.compareAndSet(false, true)) {
                    claim.exit();
                }
            }
        };
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> whenReleased() {
        return claim.anchor().whenReleased();
    }

    @Override
    public void close() {
        claim.close();
    }

    @Override
    public String toString() {
        return "SyncFdWaiter[fd " + fd + "]";
    }
}
