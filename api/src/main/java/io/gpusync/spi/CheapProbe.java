package io.gpusync.spi;

import io.gpusync.SyncWaiter;

/**
 * Marks a waiter whose {@link SyncWaiter#isSignaled()} never blocks and is cheap enough to spin on: a memory
 * read (a timeline value the GPU writes into pinned host memory) or a driver status query that makes no
 * system call (CUDA's {@code cuEventQuery}). Engines may spin on such a probe for a
 * short budget before falling back to a slower path (a callback), which catches completions that are
 * microseconds away at the cost of bounded CPU.
 */
public interface CheapProbe extends SyncWaiter {
}
