package io.gpusync.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncException;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What gpusync's CUDA stream callback does when the driver calls it, without a GPU: the test calls the upcall's
 * body ({@link StreamCallbacks#ran}) of a service of its own as the driver would, with success or with an error
 * status. That the driver does call stream callbacks with the error after a fault, on every stream of the context, is
 * {@code CudaFaultReportGpuTest}'s and {@code CudaFaultsGpuTest}'s (H200).
 */
class StreamCallbacksTest {
    private static final MemorySegment CONTEXT = MemorySegment.ofAddress(0xfa17_0000L);
    private static final int CUDA_ERROR_LAUNCH_FAILED = 719;
    /** A service of this test's own: nothing another test registered is in flight here. */
    private final CudaDriverService cuda = new CudaDriverService(StreamCallbackBudget.DEFAULT_CAPACITY);
    private final StreamCallbacks callbacks = cuda.callbacks();

    /** A slot that records how it ended and on which thread. */
    private static final class Outcome implements StreamCallbacks.Slot {
        final AtomicInteger fired = new AtomicInteger();
        final CompletableFuture<SyncException> failed = new CompletableFuture<>();
        volatile String failedOn;

        @Override
        public void fire() {
            fired.incrementAndGet();
        }

        @Override
        public void fail(SyncException error) {
            failedOn = Thread.currentThread().getName();
            failed.complete(error);
        }
    }

    @BeforeEach
    void noDriverHere() {
        CudaTestSupport.assumeNoCudaDriver();
    }

    @AfterEach
    void closeTheService() {
        cuda.close(); // its fault watch ends once nothing is registered
    }

    @Test
    void aCallbackThatRunsWithSuccessFiresItsSlotOnceAndLandsIt() {
        Outcome o = new Outcome();
        long key = callbacks.register(CONTEXT, null, o);
        callbacks.takingOff(key);
        assertThat(callbacks.reportsOwnFaults(CONTEXT.address())).as("a callback of the context is in flight").isTrue();

        callbacks.ran(MemorySegment.NULL, CudaResults.SUCCESS, MemorySegment.ofAddress(key));

        assertThat(o.fired).hasValue(1);
        assertThat(o.failed).isNotDone();
        assertThat(callbacks.registered(key)).isFalse();
        assertThat(callbacks.reportsOwnFaults(CONTEXT.address())).as("nothing in flight any more").isFalse();
    }

    @Test
    void aCallbackThatRunsWithAnErrorNeverFiresAndItsWaitFailsWithDeviceLostOffTheDriverThread() throws Exception {
        Outcome o = new Outcome();
        long key = callbacks.register(CONTEXT, null, o);
        callbacks.takingOff(key);

        // the driver calls the callback with the context's sticky error; it may not call CUDA, so it only reports
        callbacks.ran(MemorySegment.NULL, CUDA_ERROR_LAUNCH_FAILED, MemorySegment.ofAddress(key));

        SyncException error = o.failed.get(5, TimeUnit.SECONDS);
        assertThat(error).isInstanceOf(DeviceLostException.class);
        assertThat(error.kind()).isEqualTo(ErrorKind.FATAL);
        assertThat(error.getMessage()).contains("CUDA_ERROR_LAUNCH_FAILED");
        assertThat(o.failedOn).as("classified and failed by the fault watch, not on the calling thread")
                .isEqualTo("gpusync-cuda-fault-watch");
        assertThat(o.fired).hasValue(0);
        assertThat(callbacks.registered(key)).isFalse();
        assertThat(callbacks.reportsOwnFaults(CONTEXT.address())).isFalse();
    }

    @Test
    void aCancelledCallbackThatRunsLaterFindsNothingButStillLands() {
        Outcome o = new Outcome();
        long key = callbacks.register(CONTEXT, null, o);
        callbacks.takingOff(key);
        assertThat(callbacks.cancel(key)).isTrue();
        assertThat(callbacks.reportsOwnFaults(CONTEXT.address()))
                .as("a cancelled callback still runs, so it still reports a fault").isTrue();

        callbacks.ran(MemorySegment.NULL, CudaResults.SUCCESS, MemorySegment.ofAddress(key));

        assertThat(o.fired).hasValue(0);
        assertThat(o.failed).isNotDone();
        assertThat(callbacks.reportsOwnFaults(CONTEXT.address())).isFalse();
    }
}
