package io.gpusync.opencl;

import io.gpusync.testsuite.ChildJvm;
import io.gpusync.SyncException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.internal.NativeLibraries;
import io.gpusync.test.opencl.OpenClContext;
import io.gpusync.test.opencl.OpenClUserEvent;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import io.gpusync.bindings.opencl.OpenCl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The PoCL 3.1 hazard of a failing dependency: when a user event fails, PoCL fails every command waiting on it inside
 * {@code clSetUserEventStatus}, drops its own reference to each such command and then locks the command's event again.
 * If the application's last reference to that command was released before (or while) this happens, the lock hits
 * freed memory and PoCL aborts the process ({@code PTHREAD ERROR in pocl_update_event_failed()} or
 * {@code pocl_lock_events_inorder()}, SIGABRT). Closing a point in a timeout's or a failure's handler is exactly such
 * a release, so gpusync must hold its reference until the driver is done with the command.
 *
 * <p>Run in a child JVM: on a gpusync that releases at once, the child dies of SIGABRT (status 134) in the first
 * round of the first scenario.
 */
class OpenClFailedDependencyTest {
    static final int ROUNDS = 300;

    @BeforeAll
    static void driver() {
        assumeTrue(NativeLibraries.isAvailable(Cl.LIBRARY), Cl.LIBRARY + " is not installed: no OpenCL on this machine");
        try {
            OpenClContext.createDefault().close();
        } catch (SyncNotSupportedException e) {
            assumeTrue(false, "no OpenCL platform/device: " + e.getMessage());
        }
    }

    OpenClContext cl;
    OpenClUserEvent gate;

    @BeforeEach
    void context() {
        cl = OpenClContext.createDefault();
        gate = cl.newUserEvent();
    }

    @AfterEach
    void close() {
        try {
            gate.complete(); // never leave a command waiting on an unset user event
        } catch (SyncException alreadySet) {
            // fine
        }
        gate.close();
        cl.finish();
        cl.close();
    }

    @Test
    void pointsClosedAroundAFailingUserEventAsAnApplicationDoesNeverAbortTheProcess() throws Exception {
        String out = ChildJvm.runOk(Child.class, List.of(), Integer.toString(ROUNDS));
        assertThat(out).contains("all scenarios done");
    }

    @Test
    void aCommandClosedWhilePendingKeepsGpusyncsReferenceUntilItsFailureIsOver() throws Exception {
        SyncPoint.OpenCl gatePoint = gate.newPoint();
        SyncPoint.OpenCl marker = cl.enqueueMarker(gatePoint);
        MemorySegment ev = marker.event();
        Cl.retainEvent(ev, "test"); // the test's own reference: the count stays readable
        try {
            int base = refs(ev); // the test's, gpusync's and the queue's
            marker.waiter().close();
            gatePoint.waiter().close();
            assertThat(refs(ev)).as("gpusync's reference, held while the marker may still fail").isEqualTo(base);
            assertThat(ClEventRelease.isHeld(ev)).isTrue();
            gate.fail(-1);
            // the driver drops its reference as it fails the marker; gpusync's goes once the user event it waits on
            // is settled (terminated, referenced by gpusync alone, no call of gpusync's setting it in flight)
            eventually("gpusync's release", () -> !ClEventRelease.isHeld(ev));
            assertThat(refs(ev)).isEqualTo(1);
        } finally {
            OpenCl.clReleaseEvent(ev);
        }
    }

    @Test
    void aFailedCommandWhoseLastReferenceIsGpusyncsIsReleasedSoonAfterTheDriverLetsGo() throws Exception {
        SyncPoint.OpenCl gatePoint = gate.newPoint();
        SyncPoint.OpenCl marker = cl.enqueueMarker(gatePoint);
        MemorySegment ev = marker.event();
        marker.waiter().close();
        gatePoint.waiter().close();
        assertThat(ClEventRelease.isHeld(ev)).isTrue();
        long t0 = System.nanoTime();
        gate.fail(-1);
        eventually("gpusync's release", () -> !ClEventRelease.isHeld(ev));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        System.out.println("failed marker released " + millis + " ms after its dependency failed");
        assertThat(millis).as("released once what it waits on was settled, within a few sweeps")
                .isLessThan(50 * ClEventRelease.SWEEP_MILLIS_MIN);
    }

    @Test
    void aCompletedCommandIsReleasedAtOnce() throws Exception {
        SyncPoint.OpenCl gatePoint = gate.newPoint();
        SyncPoint.OpenCl marker = cl.enqueueMarker(gatePoint);
        MemorySegment ev = marker.event();
        Cl.retainEvent(ev, "test");
        try {
            gate.complete();
            while (!marker.isSignaled()) { // probes: no callback registration left holding the event
                Thread.onSpinWait();
            }
            eventually("the driver's own reference dropped", () -> refs(ev) == 2); // the test's and gpusync's
            marker.waiter().close();
            gatePoint.waiter().close();
            assertThat(refs(ev)).as("released on the closing thread").isEqualTo(1);
            assertThat(ClEventRelease.isHeld(ev)).isFalse();
        } finally {
            OpenCl.clReleaseEvent(ev);
        }
    }

    @Test
    void aCommandThatCompletesAfterItsPointIsClosedIsReleasedOnceComplete() throws Exception {
        SyncPoint.OpenCl gatePoint = gate.newPoint();
        SyncPoint.OpenCl marker = cl.enqueueMarker(gatePoint);
        MemorySegment ev = marker.event();
        Cl.retainEvent(ev, "test");
        try {
            marker.waiter().close();
            gatePoint.waiter().close();
            assertThat(ClEventRelease.isHeld(ev)).isTrue();
            gate.complete();
            eventually("gpusync's release", () -> !ClEventRelease.isHeld(ev));
            eventually("only the test's reference left", () -> refs(ev) == 1); // the driver drops its own too
        } finally {
            OpenCl.clReleaseEvent(ev);
        }
    }

    static int refs(MemorySegment event) {
        return Cl.referenceCount(event, "test");
    }

    static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waiting for: " + what).isLessThan(deadline);
            Thread.sleep(1);
        }
    }

    /**
     * The user-style sequences, {@code rounds} times each, on one context: commands that depend on a user event, their
     * points closed the way an application closes them (after a timed-out wait, after cancelling a registration, in
     * the failure's own listener, as soon as a probe throws), and the user event then failed.
     */
    public static final class Child {
        /** {@code args}: rounds, then optionally the scenario numbers to run (1-5; all by default). */
        public static void main(String[] args) throws Exception {
            int rounds = Integer.parseInt(args[0]);
            String only = args.length > 1 ? "," + args[1] + "," : null;
            try (OpenClContext cl = OpenClContext.createDefault()) {
                List<Object[]> scenarios = List.of(
                        new Object[] {"closed after a timed-out wait, then the dependency fails", rounds,
                                (Scenario) Child::closedAfterTimeout},
                        new Object[] {"registration cancelled and closed, then the dependency fails", rounds,
                                (Scenario) Child::closedAfterCancel},
                        new Object[] {"a kernel and a marker after it closed pending, then the dependency fails", rounds,
                                (Scenario) Child::chainClosedPending},
                        new Object[] {"closed in the failure's own listener", rounds / 3,
                                (Scenario) Child::closedInFailureListener},
                        new Object[] {"closed as soon as a probe throws, the failure on another thread", rounds,
                                (Scenario) Child::closedWhenProbeThrows});
                for (int i = 0; i < scenarios.size(); i++) {
                    if (only == null || only.contains("," + (i + 1) + ",")) {
                        Object[] s = scenarios.get(i);
                        run((String) s[0], (Integer) s[1], cl, (Scenario) s[2]);
                    }
                }
                cl.finish();
            }
            System.out.println("all scenarios done");
        }

        @FunctionalInterface
        interface Scenario {
            void round(OpenClContext cl, OpenClUserEvent gate) throws Exception;
        }

        static void run(String name, int rounds, OpenClContext cl, Scenario scenario) throws Exception {
            for (int i = 0; i < rounds; i++) {
                try (OpenClUserEvent gate = cl.newUserEvent()) {
                    scenario.round(cl, gate);
                }
            }
            System.out.println(name + ": " + rounds + " rounds");
        }

        static void closedAfterTimeout(OpenClContext cl, OpenClUserEvent gate) {
            SyncPoint.OpenCl gatePoint = gate.newPoint();
            SyncPoint.OpenCl marker = cl.enqueueMarker(gatePoint);
            try {
                marker.await(Duration.ofMillis(1));
                throw new AssertionError("the marker completed before its dependency was set");
            } catch (SyncTimeoutException expected) {
                // as a Mono.timeout would end it
            } finally { // what doFinally does
                marker.waiter().close();
                gatePoint.waiter().close();
            }
            gate.fail(-1);
        }

        static void closedAfterCancel(OpenClContext cl, OpenClUserEvent gate) {
            SyncPoint.OpenCl gatePoint = gate.newPoint();
            SyncPoint.OpenCl marker = cl.enqueueMarker(gatePoint);
            CallbackRegistration r = ((SignalCallbackWaiter) marker.waiter()).onSignal(new Ignored());
            r.cancel(); // a disposed subscription
            marker.waiter().close();
            gatePoint.waiter().close();
            gate.fail(-2);
        }

        static void chainClosedPending(OpenClContext cl, OpenClUserEvent gate) {
            SyncPoint.OpenCl gatePoint = gate.newPoint();
            SyncPoint.OpenCl kernel = cl.enqueueSpin(10, gatePoint);
            SyncPoint.OpenCl marker = cl.enqueueMarker(kernel);
            kernel.waiter().close();
            marker.waiter().close();
            gatePoint.waiter().close();
            gate.fail(-3);
        }

        static void closedInFailureListener(OpenClContext cl, OpenClUserEvent gate) throws Exception {
            SyncPoint.OpenCl gatePoint = gate.newPoint();
            SyncPoint.OpenCl marker = cl.enqueueMarker(gatePoint);
            CountDownLatch ended = new CountDownLatch(1);
            ((SignalCallbackWaiter) marker.waiter()).onSignal(new SignalListener() {
                @Override
                public void signalled() {
                    marker.waiter().close();
                    ended.countDown();
                }

                @Override
                public void failed(SyncException error) { // doOnError
                    marker.waiter().close();
                    ended.countDown();
                }
            });
            gate.fail(-4);
            assertThat(ended.await(10, TimeUnit.SECONDS)).as("the marker's failure reached its listener").isTrue();
            gatePoint.waiter().close();
        }

        /** The marker has many dependents of its own, so PoCL is still failing them when the probe sees the failure. */
        static void closedWhenProbeThrows(OpenClContext cl, OpenClUserEvent gate) throws Exception {
            SyncPoint.OpenCl gatePoint = gate.newPoint();
            SyncPoint.OpenCl marker = cl.enqueueMarker(gatePoint);
            List<SyncPoint.OpenCl> dependents = new java.util.ArrayList<>();
            for (int i = 0; i < 100; i++) {
                dependents.add(cl.enqueueMarker(marker));
            }
            CountDownLatch probing = new CountDownLatch(1);
            CompletableFuture<Void> prober = CompletableFuture.runAsync(() -> {
                try {
                    probing.countDown();
                    while (!marker.isSignaled()) {
                        Thread.onSpinWait();
                    }
                } catch (SyncException failed) {
                    // the status just turned negative: PoCL may still be failing the marker's dependents
                } finally {
                    marker.waiter().close();
                }
            });
            probing.await();
            gate.fail(-5);
            prober.get(10, TimeUnit.SECONDS);
            dependents.forEach(d -> d.waiter().close()); // failed by now: the failing call has returned
            gatePoint.waiter().close();
        }

        private static final class Ignored implements SignalListener {
            @Override
            public void signalled() {
            }

            @Override
            public void failed(SyncException error) {
            }
        }
    }
}
