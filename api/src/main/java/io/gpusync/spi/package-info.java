/**
 * The seam between backends and engines: what a {@link io.gpusync.SyncWaiter} can do beyond blocking and
 * probing, discovered by the reactor adapter with {@code instanceof}, and timeout conversion. The helpers every
 * backend shares to implement them (lifetime anchors, wait and probe loops, deadlines) are in
 * {@code io.gpusync.kit}, in the backend kit module, which applications cannot read.
 *
 * <p>A backend implements only what its API can do:
 * <ul>
 *   <li>nothing more — the waiter is probe-only ({@link io.gpusync.SyncWaiter#isSignaled()}): the engine
 *       serves it from its shared spin-then-poll scheduler;</li>
 *   <li>{@link io.gpusync.spi.BlockingWaiter} — {@code await} parks in the OS or driver: a dedicated
 *       platform thread waits on it in slices;</li>
 *   <li>{@link io.gpusync.spi.WakeableWaiter} — a blocking waiter whose blocked threads can be woken (a
 *       {@code CpuTimeline}'s, a Vulkan timeline semaphore's through a companion semaphore): a cancelled or
 *       timed-out wait frees its thread at once instead of at the end of the slice;</li>
 *   <li>{@link io.gpusync.spi.WaitSetMember} — many waits of one {@link io.gpusync.spi.WaitSet} (e.g. one
 *       Vulkan device) are served by one thread blocked in a wait-any, woken by a private primitive;</li>
 *   <li>{@link io.gpusync.spi.SignalCallbackWaiter} — the API calls back on completion: no thread waits;</li>
 *   <li>{@link io.gpusync.spi.ReadableFdWaiter} — a file descriptor becomes readable on completion: the
 *       engine puts it in an epoll set.</li>
 * </ul>
 * The engine picks the cheapest ability a waiter has (callback, then fd, then wait set, then blocking,
 * then probing).
 */
package io.gpusync.spi;
