package io.gpusync.reactor;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.cpu.CpuTimeline;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.test.StepVerifier;
import reactor.util.context.Context;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code gpusync.wait} observation of each wait ({@link SyncEngine.Builder#observationRegistry}): its name,
 * low-cardinality tags (engine, backend, path, outcome per way of ending) and the point as a high-cardinality one;
 * its parent (the Reactor Context's observation, else the current one); and no observation at all — not even a
 * wrapper around the subscriber — without a registry.
 */
class WaitObservationTest {
    private static final Duration LONG = Duration.ofSeconds(10);

    private final TestObservationRegistry registry = TestObservationRegistry.create();
    private final SyncEngine engine = GpuSync.builder().name("observed").observationRegistry(registry).build();

    @AfterEach
    void disposeTheEngine() {
        engine.dispose();
    }

    @Test
    void aCompletedWaitIsObservedWithItsEngineBackendPathOutcomeAndPoint() {
        CpuTimeline timeline = new CpuTimeline();
        SyncPoint point = timeline.at(1);

        StepVerifier.create(engine.await(point, LONG)).then(() -> timeline.signal(1)).expectComplete().verify(LONG);

        assertThat(registry).hasNumberOfObservationsWithNameEqualTo("gpusync.wait", 1)
                .hasObservationWithNameEqualTo("gpusync.wait").that()
                .hasBeenStarted().hasBeenStopped().doesNotHaveError()
                .hasLowCardinalityKeyValue("engine", "observed")
                .hasLowCardinalityKeyValue("backend", "cpu")
                .hasLowCardinalityKeyValue("path", "callback")
                .hasLowCardinalityKeyValue("outcome", "completed")
                .hasHighCardinalityKeyValue("point", point.waiter().toString())
                .doesNotHaveParentObservation();
    }

    @Test
    void aWaitAnsweredByTheFirstProbeTookTheImmediatePath() {
        CpuTimeline timeline = new CpuTimeline();
        timeline.signal(1);

        StepVerifier.create(engine.await(timeline.at(1), LONG)).expectComplete().verify(LONG);

        assertThat(registry).hasObservationWithNameEqualTo("gpusync.wait").that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("path", "immediate")
                .hasLowCardinalityKeyValue("outcome", "completed");
    }

    @Test
    void aTimedOutWaitHasTheTimeoutOutcomeAndItsExceptionAsTheError() {
        CpuTimeline timeline = new CpuTimeline();

        StepVerifier.create(engine.await(timeline.at(1), Duration.ofMillis(20)))
                .expectError(SyncTimeoutException.class).verify(LONG);

        assertThat(registry).hasObservationWithNameEqualTo("gpusync.wait").that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("outcome", "timeout")
                .assertThatError().isInstanceOf(SyncTimeoutException.class);
    }

    @Test
    void aFailedWaitHasTheFailedOutcomeAndTheDriversErrorAsTheError() {
        CpuTimeline timeline = new CpuTimeline();
        IllegalStateException cause = new IllegalStateException("the producer gave up");

        StepVerifier.create(engine.await(timeline.at(1), LONG)).then(() -> timeline.fail(cause))
                .expectError(SyncException.class).verify(LONG);

        assertThat(registry).hasObservationWithNameEqualTo("gpusync.wait").that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("outcome", "failed")
                .hasLowCardinalityKeyValue("path", "callback")
                .assertThatError().isInstanceOf(SyncException.class);
    }

    @Test
    void aCancelledWaitIsStoppedWithTheCancelledOutcomeAndNoError() {
        CpuTimeline timeline = new CpuTimeline();
        Disposable wait = engine.await(timeline.at(1), SyncPoint.FOREVER).subscribe();

        assertThat(registry).hasObservationWithNameEqualTo("gpusync.wait").that()
                .hasBeenStarted().isNotStopped();
        wait.dispose();

        assertThat(engine.pendingWaits()).isZero();
        assertThat(timeline.pendingWaits()).isZero();
        assertThat(registry).hasObservationWithNameEqualTo("gpusync.wait").that()
                .hasBeenStopped().doesNotHaveError()
                .hasLowCardinalityKeyValue("outcome", "cancelled");
    }

    @Test
    void aWaitEndedByTheEnginesDisposeIsCancelled() {
        CpuTimeline timeline = new CpuTimeline();
        StepVerifier.create(engine.await(timeline.at(1), SyncPoint.FOREVER))
                .then(engine::dispose)
                .expectError(SyncCancelledException.class).verify(LONG);

        assertThat(registry).hasObservationWithNameEqualTo("gpusync.wait").that()
                .hasBeenStopped().doesNotHaveError()
                .hasLowCardinalityKeyValue("outcome", "cancelled");
    }

    @Test
    void theObservationIsAChildOfTheOneInTheSubscribersReactorContext() {
        Observation request = Observation.start("http.server.requests", registry);
        CpuTimeline timeline = new CpuTimeline();

        StepVerifier.create(engine.awaitAll(List.of(timeline.at(1), timeline.at(2)), LONG)
                        .contextWrite(Context.of(ObservationThreadLocalAccessor.KEY, request)))
                .then(() -> timeline.signal(2)).expectComplete().verify(LONG);
        request.stop();

        assertThat(registry).hasNumberOfObservationsWithNameEqualTo("gpusync.wait", 2)
                .forAllObservationsWithNameEqualTo("gpusync.wait", wait -> wait.hasParentObservationEqualTo(request)
                        .hasLowCardinalityKeyValue("outcome", "completed"));
    }

    @Test
    void theReactorContextsObservationWinsOverTheThreadsCurrentOne() {
        Observation current = Observation.start("current", registry);
        Observation request = Observation.start("request", registry);
        CpuTimeline timeline = new CpuTimeline();
        timeline.signal(1);

        try (Observation.Scope ignored = current.openScope()) {
            StepVerifier.create(engine.await(timeline.at(1), LONG)
                            .contextWrite(Context.of(ObservationThreadLocalAccessor.KEY, request)))
                    .expectComplete().verify(LONG);
        }

        assertThat(registry).hasObservationWithNameEqualTo("gpusync.wait").that().hasParentObservationEqualTo(request);
    }

    @Test
    void onAVirtualThreadWithoutAReactorParentTheCurrentObservationIsTheParent() throws Exception {
        // Mono.block subscribes on the virtual thread itself
        assertObservedUnderTheVirtualThreadsObservation(point -> engine.await(point, LONG).block());
    }

    @Test
    void aVirtualThreadBlockedThroughTheEngineIsObservedUnderItsCurrentObservation() throws Exception {
        // the engine's block starts the wait on its loop, not on the virtual thread
        assertObservedUnderTheVirtualThreadsObservation(point -> engine.block(point, LONG));
    }

    /** A virtual thread inside an observation's scope waits with {@code blockingWait}; its wait is that one's child. */
    private void assertObservedUnderTheVirtualThreadsObservation(java.util.function.Consumer<SyncPoint> blockingWait)
            throws InterruptedException {
        CpuTimeline timeline = new CpuTimeline();
        AtomicReference<Observation> parent = new AtomicReference<>();
        Thread waiter = Thread.ofVirtual().start(() -> {
            Observation handling = Observation.start("handling", registry);
            parent.set(handling);
            try (Observation.Scope ignored = handling.openScope()) {
                blockingWait.accept(timeline.at(1));
            } finally {
                handling.stop();
            }
        });
        while (timeline.pendingWaits() == 0 && waiter.isAlive()) {
            Thread.onSpinWait();
        }
        timeline.signal(1);
        waiter.join(LONG.toMillis());

        assertThat(waiter.isAlive()).isFalse();
        assertThat(registry).hasObservationWithNameEqualTo("gpusync.wait").that()
                .hasBeenStopped().hasLowCardinalityKeyValue("outcome", "completed")
                .hasParentObservationEqualTo(parent.get());
    }

    @Test
    void aWaitStartedOnAnotherThreadForACallerKeepsTheCallersObservationAsItsParent() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        timeline.signal(1);
        Observation handling = Observation.start("handling", registry);
        Context callers;
        try (Observation.Scope ignored = handling.openScope()) {
            callers = engine.callerContext(); // on the caller's thread, as the blocking API's hand-off does
        }
        Thread loop = Thread.ofPlatform().start(() -> engine.subscribe(timeline.at(1).waiter(), LONG,
                new Recorder(new AtomicReference<>()) {
                    @Override
                    public Context currentContext() {
                        return callers;
                    }
                }));
        loop.join(LONG.toMillis());
        handling.stop();

        SyncEngine plain = GpuSync.builder().name("plain").build();
        try {
            assertThat(plain.callerContext().isEmpty()).as("without a registry").isTrue();
        } finally {
            plain.dispose();
        }
        assertThat(registry).hasObservationWithNameEqualTo("gpusync.wait").that()
                .hasBeenStopped().hasParentObservationEqualTo(handling);
    }

    @Test
    void aConventionGivenToTheBuilderNamesAndTagsTheObservation() {
        SyncEngine custom = GpuSync.builder().name("custom").observationRegistry(registry)
                .observationConvention(new DefaultGpuSyncWaitObservationConvention() {
                    @Override
                    public String getName() {
                        return "gpu.fence";
                    }

                    @Override
                    public KeyValues getLowCardinalityKeyValues(GpuSyncWaitContext context) {
                        return super.getLowCardinalityKeyValues(context).and(KeyValue.of("tenant", "a"));
                    }
                }).build();
        try {
            CpuTimeline timeline = new CpuTimeline();
            timeline.signal(1);
            StepVerifier.create(custom.await(timeline.at(1), LONG)).expectComplete().verify(LONG);
        } finally {
            custom.dispose();
        }

        assertThat(registry).hasNumberOfObservationsEqualTo(1)
                .hasObservationWithNameEqualTo("gpu.fence").that()
                .hasLowCardinalityKeyValue("tenant", "a").hasLowCardinalityKeyValue("outcome", "completed");
    }

    @Test
    void theObservationIsStoppedBeforeTheSubscriberHearsOfTheOutcome() {
        CpuTimeline timeline = new CpuTimeline();
        List<String> seen = new CopyOnWriteArrayList<>();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStop(Observation.Context context) {
                seen.add("stop " + context.getName());
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return context instanceof GpuSyncWaitContext;
            }
        });

        StepVerifier.create(engine.await(timeline.at(1), LONG).doOnSuccess(v -> seen.add("onComplete")))
                .then(() -> timeline.signal(1)).expectComplete().verify(LONG);

        assertThat(seen).containsExactly("stop gpusync.wait", "onComplete");
    }

    @Test
    void withoutARegistryOrWithOneThatObservesNothingTheSubscriberGetsTheEnginesOwnSubscription() {
        SyncEngine plain = GpuSync.builder().name("plain").build();
        SyncEngine noHandlers = GpuSync.builder().name("no-handlers").observationRegistry(ObservationRegistry.create())
                .build();
        try {
            for (SyncEngine e : List.of(plain, noHandlers)) {
                CpuTimeline timeline = new CpuTimeline();
                AtomicReference<Subscription> given = new AtomicReference<>();
                e.await(timeline.at(1), LONG).subscribe(new Recorder(given));
                assertThat(given.get()).as(e.name()).isInstanceOf(PendingWait.class);
                given.get().cancel();
            }
        } finally {
            plain.dispose();
            noHandlers.dispose();
        }
        assertThat(registry).doesNotHaveAnyObservation();
    }

    @Test
    void anObservedWaitHandsTheSubscriberItsWrapperWhichScansLikeAnOperator() {
        CpuTimeline timeline = new CpuTimeline();
        AtomicReference<Subscription> given = new AtomicReference<>();
        engine.await(timeline.at(1), LONG).subscribe(new Recorder(given));

        assertThat(given.get()).isInstanceOf(ObservedWait.class);
        ObservedWait observed = (ObservedWait) given.get();
        assertThat(observed.scan(reactor.core.Scannable.Attr.PARENT)).isInstanceOf(PendingWait.class);
        assertThat(observed.scan(reactor.core.Scannable.Attr.CANCELLED)).isFalse();
        observed.cancel();
        assertThat(observed.scan(reactor.core.Scannable.Attr.CANCELLED)).isTrue();
        assertThat(observed.scan(reactor.core.Scannable.Attr.TERMINATED)).isFalse();
    }

    /** Keeps the subscription it is given; requests nothing (a Mono<Void> needs no demand to terminate). */
    private static class Recorder implements CoreSubscriber<Void> {
        private final AtomicReference<Subscription> given;

        Recorder(AtomicReference<Subscription> given) {
            this.given = given;
        }

        @Override
        public void onSubscribe(Subscription s) {
            given.set(s);
        }

        @Override
        public void onNext(Void v) {
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onComplete() {
        }
    }

}
