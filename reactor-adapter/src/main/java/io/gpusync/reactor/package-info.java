/**
 * gpusync's reactive engine: {@link io.gpusync.reactor.GpuSync} turns {@link io.gpusync.SyncPoint}s into
 * {@code Mono<Void>} waits served by a {@link io.gpusync.reactor.SyncEngine} — callbacks, Netty epoll event
 * loops, wait-set threads, a waiter-thread pool and a spin-then-poll scheduler, picked per waiter
 * ({@link io.gpusync.reactor.WaitPath}). Pipelines of submitted work are awaited with
 * {@link io.gpusync.reactor.SyncEngine#awaitEach} / {@link io.gpusync.reactor.SyncEngine#awaitEachUnordered}
 * (bounded in flight, backpressure reaching the submitter) and races with
 * {@link io.gpusync.reactor.SyncEngine#awaitFirst}.
 */
package io.gpusync.reactor;
