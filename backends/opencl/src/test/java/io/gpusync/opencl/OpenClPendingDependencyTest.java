package io.gpusync.opencl;

import io.gpusync.testsuite.ChildJvm;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.test.opencl.OpenClContext;
import io.gpusync.test.opencl.OpenClUserEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The PoCL 3.1 hazard of a command that fails while an event it waits on is still pending: PoCL keeps the command in
 * that event's list of dependents, and when the event terminates it locks every dependent
 * ({@code pocl_broadcast} → {@code pocl_lock_events_inorder}). If the failed command's last reference was released in
 * between, that lock hits freed memory and PoCL aborts the process ({@code PTHREAD ERROR in
 * pocl_lock_events_inorder():399: Invalid argument (22)}, SIGABRT). The soak met it with markers on an in-order queue:
 * a marker failed through its own user event while the marker before it still waited on another.
 *
 * <p>The child JVM runs the sequences many times; on a gpusync that releases a failed command once the driver has let
 * go of it (5db1126), it dies of SIGABRT (status 134) in the first round.
 */
class OpenClPendingDependencyTest {
    static final int ROUNDS = 30;

    @BeforeAll
    static void driver() {
        OpenClFailedDependencyTest.driver();
    }

    OpenClContext cl;

    @BeforeEach
    void context() {
        cl = OpenClContext.createDefault();
    }

    @AfterEach
    void close() {
        cl.finish();
        cl.close();
    }

    @Test
    void failedCommandsWhoseDependenciesTerminateLaterNeverAbortTheProcess() throws Exception {
        String out = ChildJvm.runOk(Child.class, List.of(), Integer.toString(ROUNDS));
        assertThat(out).contains("events gpusync still references: 0", "all scenarios done");
    }

    @Test
    void aFailedMarkerIsHeldUntilTheMarkerBeforeItOnTheQueueHasTerminated() throws Exception {
        OpenClUserEvent first = cl.newUserEvent();
        OpenClUserEvent second = cl.newUserEvent();
        SyncPoint.OpenCl firstGate = first.newPoint();
        SyncPoint.OpenCl before = cl.enqueueMarker(firstGate);
        SyncPoint.OpenCl secondGate = second.newPoint();
        SyncPoint.OpenCl failing = cl.enqueueMarker(secondGate);
        MemorySegment ev = failing.event();
        Cl.retainEvent(ev, "test"); // the count stays readable
        try {
            failing.waiter().close();
            secondGate.waiter().close();
            second.fail(-7);
            second.close();
            // PoCL fails the marker at once; NVIDIA's driver leaves it pending until it reaches the head of its
            // in-order queue (a pending command is held anyway): this case is the one PoCL's abort needs
            assumeTrue(Cl.status(ev, "test") < 0, cl.deviceName() + " does not fail a command behind a failed"
                    + " user event before the commands ahead of it have run");
            Thread.sleep(20 * ClEventRelease.SWEEP_MILLIS_MIN);
            assertThat(ClEventRelease.isHeld(ev)).as("held while the marker before it still lists it").isTrue();
            assertThat(Cl.referenceCount(ev, "test")).as("the test's and gpusync's").isEqualTo(2);
            first.complete();
            before.await(Duration.ofSeconds(10));
            OpenClFailedDependencyTest.eventually("gpusync's release", () -> !ClEventRelease.isHeld(ev));
            assertThat(Cl.referenceCount(ev, "test")).isEqualTo(1);
        } finally {
            OpenCl.clReleaseEvent(ev);
            before.waiter().close();
            firstGate.waiter().close();
            first.close();
        }
    }

    @Test
    void aFailedMarkerIsHeldUntilEveryEventOfItsWaitListHasTerminated() throws Exception {
        OpenClUserEvent first = cl.newUserEvent();
        OpenClUserEvent second = cl.newUserEvent();
        SyncPoint.OpenCl firstGate = first.newPoint();
        SyncPoint.OpenCl secondGate = second.newPoint();
        SyncPoint.OpenCl failing = cl.enqueueMarker(firstGate, secondGate);
        MemorySegment ev = failing.event();
        failing.waiter().close();
        secondGate.waiter().close();
        firstGate.waiter().close();
        second.fail(-8);
        Thread.sleep(20 * ClEventRelease.SWEEP_MILLIS_MIN);
        assertThat(ClEventRelease.isHeld(ev)).as("held while the first user event still lists it").isTrue();
        first.complete();
        OpenClFailedDependencyTest.eventually("gpusync's release", () -> !ClEventRelease.isHeld(ev));
        first.close();
        second.close();
    }

    @Test
    void closingAUserEventWhoseStatusWasNeverSetFailsItAndTheCommandsWaitingOnIt() throws Exception {
        OpenClUserEvent gate = cl.newUserEvent();
        SyncPoint.OpenCl gatePoint = gate.newPoint();
        SyncPoint.OpenCl marker = cl.enqueueMarker(gatePoint);
        try {
            gate.close();
            assertThat(Cl.status(gatePoint.event(), "test")).as("the status close() set")
                    .isEqualTo(OpenClUserEvent.CLOSED_UNSET);
            assertThatThrownBy(() -> gatePoint.await(Duration.ofSeconds(10)))
                    .isInstanceOfSatisfying(SyncBackendException.class, e ->
                            assertThat(e.nativeCode()).isEqualTo(OpenClUserEvent.CLOSED_UNSET));
            assertThatThrownBy(() -> marker.await(Duration.ofSeconds(10))).isInstanceOf(SyncException.class);
            CompletableFuture.runAsync(cl::finish).get(10, TimeUnit.SECONDS); // nothing left waiting on the queue
        } finally {
            OpenCl.clSetUserEventStatus(gatePoint.event(), -1); // if close() left it unset: the queue must drain
            gatePoint.waiter().close();
            marker.waiter().close();
        }
    }

    @Test
    void closingAUserEventWhoseStatusWasSetLeavesItAsItIs() {
        OpenClUserEvent done = cl.newUserEvent();
        OpenClUserEvent failed = cl.newUserEvent();
        SyncPoint.OpenCl donePoint = done.newPoint();
        SyncPoint.OpenCl failedPoint = failed.newPoint();
        done.complete();
        failed.fail(-9);
        done.close();
        failed.close();
        done.close(); // idempotent
        assertThat(donePoint.isSignaled()).isTrue();
        assertThatThrownBy(failedPoint::isSignaled).isInstanceOfSatisfying(SyncBackendException.class, e ->
                assertThat(e.nativeCode()).isEqualTo(-9));
        donePoint.waiter().close();
        failedPoint.waiter().close();
    }

    /**
     * Commands that fail while an event they wait on is pending, every reference released as gpusync's docs say
     * (the command's point, the gate's point, the user event object), and that event terminating afterwards: {@code
     * rounds} times each.
     */
    public static final class Child {
        /** Long enough for the release of the old code to happen before the other event terminates. */
        static final long PAUSE_MILLIS = 40;
        static int kernelOutlivedThePause;

        /** {@code args}: rounds, then optionally the scenario numbers to run (1-4; all by default). */
        public static void main(String[] args) throws Exception {
            int rounds = Integer.parseInt(args[0]);
            String only = args.length > 1 ? "," + args[1] + "," : null;
            try (OpenClContext cl = OpenClContext.createDefault()) {
                List<Object[]> scenarios = List.of(
                        new Object[] {"a marker fails while the marker before it on the queue waits; it completes",
                                (Scenario) (c, i) -> behindPendingMarker(c, true)},
                        new Object[] {"a marker fails while the marker before it on the queue waits; it fails",
                                (Scenario) (c, i) -> behindPendingMarker(c, false)},
                        new Object[] {"a marker waiting on two user events fails through one; the other completes",
                                (Scenario) (c, i) -> twoUserEvents(c)},
                        new Object[] {"a marker fails while the kernel before it on the queue runs",
                                (Scenario) (c, i) -> behindRunningKernel(c, i)});
                for (int s = 0; s < scenarios.size(); s++) {
                    if (only == null || only.contains("," + (s + 1) + ",")) {
                        long t0 = System.nanoTime();
                        for (int i = 0; i < rounds; i++) {
                            ((Scenario) scenarios.get(s)[1]).round(cl, i);
                        }
                        System.out.println(scenarios.get(s)[0] + ": " + rounds + " rounds in "
                                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms"
                                + (s == 3 ? " (the kernel still ran after the pause in " + kernelOutlivedThePause
                                        + ")" : ""));
                    }
                }
                cl.finish();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (ClEventRelease.tracked() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            System.out.println("events gpusync still references: " + ClEventRelease.tracked());
            System.out.println("all scenarios done");
        }

        @FunctionalInterface
        interface Scenario {
            void round(OpenClContext cl, int round) throws Exception;
        }

        /** The soak's sequence: M1 behind U1 (pending), M2 behind U2 and, implicitly, M1; U2 fails, then U1 is set. */
        static void behindPendingMarker(OpenClContext cl, boolean complete) throws Exception {
            OpenClUserEvent first = cl.newUserEvent();
            SyncPoint.OpenCl firstGate = first.newPoint();
            SyncPoint.OpenCl before = cl.enqueueMarker(firstGate);
            failAndRelease(cl, null);
            if (complete) {
                first.complete();
            } else {
                first.fail(-2);
            }
            settle(before);
            before.waiter().close();
            firstGate.waiter().close();
            first.close();
        }

        /** M waits on U1 and U2; U2 fails, then U1 completes. */
        static void twoUserEvents(OpenClContext cl) throws Exception {
            OpenClUserEvent first = cl.newUserEvent();
            SyncPoint.OpenCl firstGate = first.newPoint();
            failAndRelease(cl, firstGate);
            firstGate.waiter().close();
            first.complete();
            first.close();
        }

        /** K runs (no dependencies), M behind U and, implicitly, K; U fails while K runs, then K completes. */
        static void behindRunningKernel(OpenClContext cl, int round) throws Exception {
            SyncPoint.OpenCl kernel = cl.enqueueSpin(100_000_000); // ~0.1-0.3 s on a CPU device
            failAndRelease(cl, null);
            if (!kernel.isSignaled()) {
                kernelOutlivedThePause++;
            }
            settle(kernel);
            kernel.waiter().close();
        }

        /**
         * A marker behind a new user event (and {@code alsoWaitOn}, if any) on the queue, released as an application
         * does while it is pending, then failed through the user event; the pause gives a gpusync that releases
         * failed commands early the time to do so.
         */
        static void failAndRelease(OpenClContext cl, SyncPoint.OpenCl alsoWaitOn) throws Exception {
            OpenClUserEvent gate = cl.newUserEvent();
            SyncPoint.OpenCl gatePoint = gate.newPoint();
            SyncPoint.OpenCl marker = alsoWaitOn == null ? cl.enqueueMarker(gatePoint)
                    : cl.enqueueMarker(alsoWaitOn, gatePoint);
            MemorySegment ev = marker.event();
            marker.waiter().close();
            gatePoint.waiter().close();
            gate.fail(-1);
            gate.close();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PAUSE_MILLIS);
            while (System.nanoTime() < deadline && ClEventRelease.isHeld(ev)) {
                Thread.sleep(1);
            }
        }

        static void settle(SyncPoint.OpenCl point) {
            try {
                point.await(Duration.ofSeconds(10));
            } catch (SyncException failed) {
                // a failed predecessor: terminated all the same
            }
        }
    }
}
