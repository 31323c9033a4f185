/**
 * gpusync's reactive engine: {@link io.gpusync.reactor.GpuSync} turns {@link io.gpusync.SyncPoint}s into
 * {@code Mono<Void>} waits served by a {@link io.gpusync.reactor.SyncEngine} — callbacks, Netty epoll event
 * loops, wait-set threads, a waiter-thread pool and a spin-then-poll scheduler, picked per waiter
 * ({@link io.gpusync.reactor.WaitPath}).
 */
package io.gpusync.reactor;
