package io.gpusync.spi;

import io.gpusync.SyncWaiter;

/**
 * Marks a waiter whose {@link SyncWaiter#await} parks the calling thread in the OS or the driver (no
 * spinning, no probe loop) and honours its timeout to the API's granularity, so an engine may dedicate a
 * platform thread to it and wait in short slices, checking for cancellation between slices.
 *
 * <p>A waiter without this mark is treated as probe-only: its {@code await} may burn a core.
 */
public interface BlockingWaiter extends SyncWaiter {
}
