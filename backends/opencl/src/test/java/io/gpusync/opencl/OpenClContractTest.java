package io.gpusync.opencl;

import io.gpusync.SyncException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.testsuite.SyncWaiterContract;
import io.gpusync.internal.NativeLibraries;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

import java.util.OptionalInt;
import io.gpusync.test.opencl.OpenClContext;
import io.gpusync.test.opencl.OpenClUserEvent;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The backend contract on PoCL: a user event the host completes or fails, and a kernel's event gated on
 * such a user event (so the test decides when the kernel may run, and a failed gate fails the kernel).
 * One OpenCL context per test: a failed command must not poison the next test's queue.
 */
class OpenClContractTest {
    /** An error status of the application's choosing for a failed user event. */
    private static final int FAILED = -9999;

    @BeforeAll
    static void driver() {
        assumeTrue(NativeLibraries.isAvailable(Cl.LIBRARY), Cl.LIBRARY + " is not installed: no OpenCL on this machine");
        try {
            OpenClContext.createDefault().close();
        } catch (SyncNotSupportedException e) {
            assumeTrue(false, "no OpenCL platform/device: " + e.getMessage());
        }
    }

    /** A subject gated on a user event of a per-test context. */
    private abstract static class Gated extends SyncWaiterContract {
        OpenClContext cl;

        /** The point under test, made on {@link #cl} and gated on {@code gate}. */
        abstract SyncPoint.OpenCl pointOn(OpenClUserEvent gate);

        @Override
        protected Subject newSubject() {
            if (cl == null) {
                cl = OpenClContext.createDefault();
            }
            OpenClUserEvent gate = cl.newUserEvent();
            SyncPoint.OpenCl point = pointOn(gate);
            return new OnceSubject() {
                @Override
                public SyncWaiter waiter() {
                    return point.waiter();
                }

                @Override
                protected void doSignal() {
                    gate.complete();
                }

                @Override
                public boolean canFail() {
                    return true;
                }

                @Override
                protected void doFail() {
                    gate.fail(FAILED);
                }

                @Override
                public boolean released() {
                    return ((OpenClEventWaiter) point.waiter()).anchor().isReleased();
                }

                @Override
                public OptionalInt pendingRegistrations() {
                    return OptionalInt.of(ClCallbacks.pending());
                }

                @Override
                public void close() {
                    try {
                        signal(); // never leave a command waiting on an unset user event
                    } catch (SyncException alreadySet) {
                        // fine
                    }
                    gate.close();
                    point.waiter().close();
                }
            };
        }

        @Override
        protected void tearDown() {
            if (cl != null) {
                cl.finish();
                cl.close();
                cl = null;
            }
        }
    }

    @Nested
    class UserEvent extends Gated {
        @Override
        SyncPoint.OpenCl pointOn(OpenClUserEvent gate) {
            return gate.newPoint();
        }
    }

    @Nested
    class KernelEvent extends Gated {
        private SyncPoint.OpenCl gatePoint;

        @Override
        SyncPoint.OpenCl pointOn(OpenClUserEvent gate) {
            gatePoint = gate.newPoint();
            return cl.enqueueSpin(1, gatePoint);
        }

        @Override
        protected void tearDown() {
            if (gatePoint != null) {
                gatePoint.waiter().close();
            }
            super.tearDown();
        }
    }
}
