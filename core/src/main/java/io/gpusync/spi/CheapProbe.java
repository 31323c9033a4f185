package io.gpusync.spi;

import io.gpusync.SyncWaiter;

/**
 * Marks a waiter whose {@link SyncWaiter#isSignaled()} is a plain memory read (nanoseconds, no driver call,
 * no system call) — e.g. a timeline value the GPU writes into pinned host memory. Engines may spin on such a
 * probe for a short budget before falling back to a slower path (a callback), which catches completions that
 * are microseconds away at the cost of bounded CPU.
 */
public interface CheapProbe extends SyncWaiter {
}
