package io.gpusync.reactor;

import io.gpusync.SyncWaiter;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import reactor.core.CoreSubscriber;
import reactor.util.context.Context;

/**
 * The {@code gpusync.wait} observations of one engine (see {@link SyncEngine.Builder#observationRegistry}): wraps
 * each wait's subscriber in an {@link ObservedWait} when the registry observes anything.
 *
 * <p><b>Parent.</b> The observation held by the subscriber's Reactor {@code Context} under
 * {@link ObservationThreadLocalAccessor#KEY} (where Micrometer and Spring put a request's observation) if there is
 * one, else the registry's current observation on the subscribing thread
 * ({@link ObservationRegistry#getCurrentObservation()}): the caller's observation for a wait started from a plain
 * or virtual thread in an open observation scope. (The key is a compile-time constant: the accessor class, which
 * needs the context-propagation library, is never loaded.)
 *
 * <p>This class and its callers are the only code that touches Micrometer's observation API: an engine built
 * without a registry never loads it. Thread-safe and immutable.
 */
final class WaitObservations {
    private final ObservationRegistry registry;
    private final GpuSyncWaitObservationConvention convention; // null: the registry's or the default one
    private final String engine;

    WaitObservations(Object registry, Object convention, String engine) {
        this.registry = (ObservationRegistry) registry;
        this.convention = (GpuSyncWaitObservationConvention) convention;
        this.engine = engine;
    }

    /**
     * A Context that carries the calling thread's current observation (empty if none): for a wait that this thread
     * asks for but another thread subscribes to — the blocking API hands a virtual thread's start to the engine's
     * loops — its subscriber returns this from {@code currentContext()}, and the wait's parent stays the caller's.
     */
    Context callerContext() {
        Observation current = registry.getCurrentObservation();
        return current == null ? Context.empty() : Context.of(ObservationThreadLocalAccessor.KEY, current);
    }

    /**
     * {@code actual}, wrapped so that the wait it subscribes to is observed from now until it terminates; or
     * {@code actual} itself when the registry (or its predicates) observe nothing. Called on the subscribing
     * thread, before the engine starts the wait.
     */
    CoreSubscriber<? super Void> observe(SyncWaiter waiter, WaitPath expectedPath,
                                         CoreSubscriber<? super Void> actual) {
        if (registry.isNoop()) {
            return actual;
        }
        GpuSyncWaitContext context = new GpuSyncWaitContext(engine, waiter, expectedPath);
        Observation observation = Observation.createNotStarted(convention,
                DefaultGpuSyncWaitObservationConvention.INSTANCE, () -> context, registry);
        if (observation.isNoop()) {
            return actual;
        }
        Object parent = actual.currentContext().getOrDefault(ObservationThreadLocalAccessor.KEY, null);
        if (parent instanceof Observation requestObservation) {
            observation.parentObservation(requestObservation); // else: the current one, set by createNotStarted
        }
        return new ObservedWait(actual, observation.start(), context);
    }
}
