package io.gpusync.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncWaiter;
import io.gpusync.internal.NativeLibraries;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Without {@code libcuda.so.1} every entry point says {@link SyncNotSupportedException} — never
 * {@link ExceptionInInitializerError}/{@link NoClassDefFoundError} from the generated {@code Cuda} class — and
 * keeps saying it on every later call.
 */
class CudaAbsentDriverTest {
    private static final MemorySegment FAKE_EVENT = MemorySegment.ofAddress(0x1000);
    private static final MemorySegment FAKE_CONTEXT = MemorySegment.ofAddress(0x2000);

    @Test
    void anExternalSemaphoreImportChecksItsArgumentsBeforeLookingForTheDriver() {
        // the only way to a CPU-awaitable external-semaphore point (CudaExternalSemaphore.point) is an import
        assertThatThrownBy(() -> CudaExternalSemaphore.importTimelineFd(-1, FAKE_CONTEXT))
                .isInstanceOf(io.gpusync.SyncInvalidArgumentException.class).hasMessageContaining("fd");
        assertThatThrownBy(() -> CudaExternalSemaphore.importTimelineFd(3, null))
                .isInstanceOf(NullPointerException.class);
    }

    @Test
    void everyEntryPointIsNotSupported() {
        assumeFalse(NativeLibraries.isAvailable("libcuda.so.1"), "a CUDA driver is installed here");
        for (int round = 0; round < 2; round++) { // the second round proves nothing was poisoned
            notSupported(() -> CudaEvents.borrow(FAKE_EVENT, FAKE_CONTEXT, 0));
            notSupported(() -> CudaEvents.borrow(FAKE_EVENT, FAKE_CONTEXT));
            notSupported(() -> CudaEvents.borrow(0x1000L, 0x2000L));
            notSupported(() -> CudaEvents.adopt(FAKE_EVENT, FAKE_CONTEXT));
            notSupported(() -> CudaEvents.record(MemorySegment.NULL, FAKE_CONTEXT));
            notSupported(() -> CudaEvents.record(0L, 0L));
            notSupported(() -> CudaHostTimeline.create(FAKE_CONTEXT));
            notSupported(() -> CudaExternalSemaphore.importTimelineFd(3, FAKE_CONTEXT));

            // a waiter that exists (built directly) cannot reach the driver either
            CudaEventSyncWaiter waiter = new CudaEventSyncWaiter(CudaDriverService.get(), FAKE_EVENT, FAKE_CONTEXT, 0,
                    NativeAnchor.borrow(CudaAbsentDriverTest.class, "fake event"));
            assertThat(waiter.backend()).isEqualTo(BackendKind.CUDA);
            assertThat(((SyncWaiter) waiter).asCudaEventWaiter()).containsSame(waiter);
            notSupported(() -> waiter.waitOnForeignStream(MemorySegment.NULL));
            notSupported(() -> waiter.waitOnForeignStream(MemorySegment.ofAddress(0x3000)));
            notSupported(waiter::isSignaled);
            notSupported(() -> waiter.await(Duration.ofMillis(1)));
            notSupported(() -> ((SignalCallbackWaiter) waiter).onSignal(new SignalListener() {
                @Override
                public void signalled() {
                    throw new AssertionError();
                }

                @Override
                public void failed(io.gpusync.SyncException error) {
                    throw new AssertionError();
                }
            }));
            waiter.close();
            assertThatThrownBy(waiter::isSignaled).isInstanceOf(IllegalStateException.class);
        }
        // names still work: from the generated constants, without initializing Cuda
        assertThat(CudaResults.name(700)).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS");
    }

    private static void notSupported(Executable call) {
        assertThatThrownBy(call::execute).isInstanceOfSatisfying(SyncNotSupportedException.class, e -> {
            assertThat(e.kind()).isEqualTo(ErrorKind.CONFIGURATION);
            assertThat(e.backend()).hasValue(BackendKind.CUDA);
            assertThat(e.getMessage()).contains("libcuda.so.1");
        });
    }
}
