package io.gpusync.reactor.backends;

import io.gpusync.BackendKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.test.opencl.OpenClContext;
import io.gpusync.test.opencl.OpenClUserEvent;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** OpenCL (PoCL here) through the engine: the callback path, no thread waiting. */
class OpenClThroughEngineTest {
    private static OpenClContext cl;
    private static SyncEngine engine;

    @BeforeAll
    static void open() {
        try {
            cl = OpenClContext.createDefault();
        } catch (SyncNotSupportedException absent) {
            assumeTrue(false, "no OpenCL driver here: " + absent.getMessage());
        }
        engine = GpuSync.builder().name("opencl").build();
    }

    @AfterAll
    static void close() {
        if (engine != null) {
            engine.dispose();
        }
        if (cl != null) {
            cl.close();
        }
    }

    @Test
    void aUserEventIsAwaitedOnTheCallbackPathAndCompletesWhenTheHostSignals() {
        try (OpenClUserEvent event = cl.newUserEvent()) {
            SyncPoint point = event.newPoint();
            assertThat(engine.pathFor(point.waiter())).isEqualTo(WaitPath.SPIN_THEN_CALLBACK); // status probes are cheap: spun on briefly
            StepVerifier.create(engine.await(point, Duration.ofSeconds(10)))
                    .expectSubscription()
                    .expectNoEvent(Duration.ofMillis(20))
                    .then(event::complete)
                    .verifyComplete();
            assertThat(engine.pendingWaits()).isZero();
        }
    }

    @Test
    void aKernelEventCompletesTheMonoOffTheDriverThread() {
        SyncPoint kernel = cl.enqueueSpin(2_000_000);
        String[] thread = new String[1];
        StepVerifier.create(engine.await(kernel, Duration.ofSeconds(30))
                        .doOnSuccess(v -> thread[0] = Thread.currentThread().getName()))
                .verifyComplete();
        // seen by the poller while it spins, or handed from the driver's callback thread to an engine loop:
        // either way an engine thread (or the subscriber's, if already complete) — never the driver's
        assertThat(thread[0]).satisfiesAnyOf(
                name -> assertThat(name).startsWith("gpusync-opencl-"),
                name -> assertThat(name).isEqualTo("main"));
    }

    @Test
    void aWaitOnAnUnsignalledUserEventTimesOutAndIsFreed() {
        try (OpenClUserEvent event = cl.newUserEvent()) {
            StepVerifier.create(engine.await(event.newPoint(), Duration.ofMillis(50)))
                    .expectError(SyncTimeoutException.class)
                    .verify(Duration.ofSeconds(10));
            assertThat(engine.pendingWaits()).isZero();
            event.complete();
        }
    }

    @Test
    void aCancelledWaitIsFreedAndTheLateCallbackDeliversNothing() throws Exception {
        try (OpenClUserEvent event = cl.newUserEvent()) {
            boolean[] delivered = new boolean[1];
            Disposable d = engine.await(event.newPoint(), SyncPoint.FOREVER)
                    .subscribe(v -> { }, e -> delivered[0] = true, () -> delivered[0] = true);
            d.dispose();
            assertThat(engine.pendingWaits()).isZero();
            event.complete();
            Thread.sleep(30);
            assertThat(delivered[0]).isFalse();
        }
    }

    @Test
    void aFailedUserEventFailsTheMonoWithItsCode() {
        try (OpenClUserEvent event = cl.newUserEvent()) {
            StepVerifier.create(engine.await(event.newPoint(), Duration.ofSeconds(10)))
                    .then(() -> event.fail(-5))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(SyncBackendException.class);
                        assertThat(((SyncBackendException) e).nativeCode()).isEqualTo(-5);
                        assertThat(((SyncException) e).backend()).contains(BackendKind.OPENCL);
                    })
                    .verify(Duration.ofSeconds(10));
        }
    }

    @Test
    void aThousandConcurrentWaitsOnUserEventsAllComplete() throws Exception {
        List<OpenClUserEvent> events = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            events.add(cl.newUserEvent());
        }
        // a wait lost under load (issue 27) shows its engine's state here, before the timeouts end it
        try (AutoCloseable dump = io.gpusync.reactor.EngineStateDump.after(Duration.ofSeconds(10), engine)) {
            var all = Flux.fromIterable(events).flatMap(e -> engine.await(e.newPoint(), Duration.ofSeconds(30)), 1000)
                    .then();
            StepVerifier.create(all)
                    .then(() -> events.forEach(OpenClUserEvent::complete))
                    .verifyComplete();
            assertThat(engine.pendingWaits()).isZero();
        } finally {
            events.forEach(OpenClUserEvent::close);
        }
    }
}
