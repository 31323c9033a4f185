package io.gpusync.spi;

import io.gpusync.SyncWaiter;

/**
 * A waiter whose point is signalled when a Linux file descriptor becomes readable (an eventfd, a
 * sync_file): an engine adds the fd to an epoll set and no thread waits.
 */
public interface ReadableFdWaiter extends SyncWaiter {

    /**
     * Holds the primitive alive and returns its fd. The fd becomes readable ({@code POLLIN}) when the point
     * is signalled and stays readable. Where readability may also mean a failure (a D3D12 fence's eventfd is
     * written when its device is removed), the waiter is a {@link CheapProbe} whose {@link #isSignaled()} throws
     * that failure: engines probe such a waiter once the fd is readable. The fd belongs to the waiter: never read, write or close it; close
     * the lease when done watching it.
     *
     * @throws IllegalStateException if this waiter is closed
     */
    FdLease leaseReadableFd();

    /** A hold on a waiter's fd; {@link #close()} releases the hold (idempotent). */
    interface FdLease extends AutoCloseable {
        /** The fd to watch for readability. */
        int fd();

        @Override
        void close();
    }
}
