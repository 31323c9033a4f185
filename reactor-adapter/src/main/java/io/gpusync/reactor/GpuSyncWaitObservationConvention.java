package io.gpusync.reactor;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and tags the {@code gpusync.wait} observation of each engine wait.
 *
 * <p><b>The observations.</b> An engine built with {@link SyncEngine.Builder#observationRegistry} observes each of
 * its waits — every operator's ({@code await}, {@code awaitAll}/{@code Any}/{@code First}, {@code awaitEach}) — from
 * subscription until the outcome is delivered or the subscriber cancels. Its parent is the observation in the
 * subscriber's Reactor {@code Context} under {@code ObservationThreadLocalAccessor.KEY} (where Spring WebFlux puts
 * a request's observation), else the registry's current observation on the subscribing thread (a plain or virtual
 * thread inside an observation's scope). It is stopped on the thread that terminates the wait (see
 * {@link WaitPath}), just before the subscriber is signalled: handlers run there and must not block. No scope is
 * opened for the wait. A registry without handlers costs a wait one check; an engine built without a registry pays
 * nothing and needs no {@code micrometer-observation} on the class or module path.
 *
 * <p>The engine uses
 * {@link DefaultGpuSyncWaitObservationConvention} unless the builder is given another one
 * ({@link SyncEngine.Builder#observationConvention}) or the registry's configuration holds one that supports a
 * {@link GpuSyncWaitContext} (Micrometer's usual order: custom, then global, then default).
 *
 * <p>Implementations are called on the thread that starts a wait (its subscribing thread) and on the thread that
 * terminates it (see {@link WaitPath}); they must be thread-safe, fast and must not block.
 */
public interface GpuSyncWaitObservationConvention extends ObservationConvention<GpuSyncWaitContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof GpuSyncWaitContext;
    }
}
