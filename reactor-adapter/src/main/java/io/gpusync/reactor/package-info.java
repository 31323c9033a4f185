/**
 * gpusync's reactive engine: {@link io.gpusync.reactor.GpuSync} turns {@link io.gpusync.SyncPoint}s into
 * {@code Mono<Void>} waits served by a {@link io.gpusync.reactor.SyncEngine} — callbacks, Netty epoll event
 * loops, wait-set threads, a waiter-thread pool and a spin-then-poll scheduler, picked per waiter
 * ({@link io.gpusync.reactor.WaitPath}). Netty is optional: only the epoll path uses it, and it needs Netty 4.2
 * (reactor-netty 1.3, Spring Boot 4) with native epoll; {@link io.gpusync.reactor.GpuSyncMetrics} publishes an
 * engine's meters to Micrometer (also optional), and an engine built with an {@code ObservationRegistry} observes each
 * wait ({@link io.gpusync.reactor.GpuSyncWaitObservationConvention}: a span per wait with tracing). Pipelines of submitted work are awaited with
 * {@link io.gpusync.reactor.SyncEngine#awaitEach} / {@link io.gpusync.reactor.SyncEngine#awaitEachUnordered}
 * (bounded in flight, backpressure reaching the submitter) and races with
 * {@link io.gpusync.reactor.SyncEngine#awaitFirst}.
 */
package io.gpusync.reactor;
