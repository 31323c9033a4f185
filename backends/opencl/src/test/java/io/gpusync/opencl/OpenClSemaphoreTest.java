package io.gpusync.opencl;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.testsuite.SyncWaiterContract;
import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.internal.NativeLibraries;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import io.gpusync.test.opencl.OpenClContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code cl_semaphore_khr} points: refused, naming the extension, where the device lacks
 * {@code cl_khr_semaphore} (PoCL here); waited on through a {@code clEnqueueWaitSemaphoresKHR} command where it
 * has it (gpu-tagged: NVIDIA's OpenCL on the H200).
 */
class OpenClSemaphoreTest {
    @BeforeAll
    static void driver() {
        assumeTrue(NativeLibraries.isAvailable(Cl.LIBRARY), Cl.LIBRARY + " is not installed: no OpenCL on this machine");
        try {
            OpenClContext.createDefault().close();
        } catch (SyncNotSupportedException e) {
            assumeTrue(false, "no OpenCL platform/device: " + e.getMessage());
        }
    }

    static boolean hasExtension(OpenClContext cl) {
        try {
            ClSemaphoreKhr.forDevice(cl.device());
            return true;
        } catch (SyncNotSupportedException e) {
            return false;
        }
    }

    @Test
    void aDeviceWithoutClKhrSemaphoreRefusesNamingTheExtension() {
        try (OpenClContext cl = OpenClContext.createDefault()) {
            assumeTrue(!hasExtension(cl), cl.deviceName() + " has cl_khr_semaphore");
            assertThatThrownBy(() -> OpenClSemaphores.waitOn(cl.queue(), MemorySegment.ofAddress(0x1000)))
                    .isInstanceOfSatisfying(SyncNotSupportedException.class,
                            e -> assertThat(e.backend()).contains(BackendKind.OPENCL))
                    .hasMessageContaining("cl_khr_semaphore").hasMessageContaining(cl.deviceName());
        }
    }

    @Test
    void badHandlesAreRejectedBeforeAnyDriverCall() {
        try (OpenClContext cl = OpenClContext.createDefault()) {
            assertThatThrownBy(() -> OpenClSemaphores.waitOn(cl.queue(), null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> OpenClSemaphores.waitOn(cl.queue(), MemorySegment.NULL))
                    .isInstanceOf(SyncInvalidArgumentException.class).hasMessageContaining("cl_semaphore_khr");
            assertThatThrownBy(() -> OpenClSemaphores.waitOn(MemorySegment.NULL, MemorySegment.ofAddress(0x1000)))
                    .isInstanceOf(SyncInvalidArgumentException.class).hasMessageContaining("cl_command_queue");
        }
    }

    /** A second queue of {@code cl}'s context, for the producer's signal (the first one waits). */
    static MemorySegment secondQueue(OpenClContext cl) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment err = a.allocate(ValueLayout.JAVA_INT);
            MemorySegment q = OpenCl.clCreateCommandQueueWithProperties(cl.context(), cl.device(), MemorySegment.NULL, err);
            ClErrors.check(err.get(ValueLayout.JAVA_INT, 0), "clCreateCommandQueueWithProperties", "signal queue");
            return q;
        }
    }

    @Test
    @Tag("gpu")
    void aSignalFromAnotherQueueCompletesTheWaitAndThePointCarriesNoValue() {
        try (OpenClContext cl = OpenClContext.createDefault()) {
            assumeTrue(hasExtension(cl), cl.deviceName() + " lacks cl_khr_semaphore");
            MemorySegment producer = secondQueue(cl);
            MemorySegment semaphore = OpenClSemaphores.createBinary(cl.device(), cl.context());
            try {
                SyncPoint.OpenCl point = OpenClSemaphores.waitOn(cl.queue(), semaphore);
                assertThat(point.waiter()).isInstanceOf(OpenClSemaphoreWaiter.class);
                assertThat(point.waiter().rebindToValue(2)).isEmpty();
                assertThatThrownBy(() -> point.withValue(2)).isInstanceOf(SyncInvalidArgumentException.class);
                assertThat(point.isSignaled()).isFalse();
                assertThatThrownBy(() -> point.await(Duration.ofMillis(20))).isInstanceOf(SyncTimeoutException.class);
                OpenClSemaphores.signal(producer, semaphore);
                point.await(Duration.ofSeconds(10));
                assertThat(point.isSignaled()).isTrue();
                point.waiter().close();
            } finally {
                OpenCl.clFinish(producer);
                OpenCl.clReleaseCommandQueue(producer);
                OpenClSemaphores.release(cl.device(), semaphore);
            }
        }
    }

    /** The backend contract on {@code cl_semaphore_khr} points (gpu-tagged: needs the extension). */
    @Nested
    @Tag("gpu")
    class Contract extends SyncWaiterContract {
        private OpenClContext cl;
        private MemorySegment producer;

        @Override
        protected Subject newSubject() {
            if (cl == null) {
                cl = OpenClContext.createDefault();
                assumeTrue(hasExtension(cl), cl.deviceName() + " lacks cl_khr_semaphore");
                producer = secondQueue(cl);
            }
            MemorySegment semaphore = OpenClSemaphores.createBinary(cl.device(), cl.context());
            SyncPoint.OpenCl point = OpenClSemaphores.waitOn(cl.queue(), semaphore);
            OpenClSemaphoreWaiter waiter = (OpenClSemaphoreWaiter) point.waiter();
            return new OnceSubject() {
                @Override
                public SyncWaiter waiter() {
                    return waiter;
                }

                @Override
                protected void doSignal() {
                    OpenClSemaphores.signal(producer, semaphore);
                }

                @Override
                public boolean released() {
                    return waiter.released();
                }

                @Override
                public void close() {
                    signal(); // never leave a wait command blocked on the in-order queue
                    waiter.close();
                    OpenClSemaphores.release(cl.device(), semaphore); // the test's reference; the point held its own
                }
            };
        }

        @Override
        protected void tearDown() {
            if (cl != null) {
                OpenCl.clFinish(cl.queue());
                if (producer != null) { // null where the device lacks cl_khr_semaphore and the spec was skipped
                    OpenCl.clReleaseCommandQueue(producer);
                    producer = null;
                }
                cl.close();
                cl = null;
            }
        }
    }
}
