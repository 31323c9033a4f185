package io.gpusync;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ErrorKindTest {

    @Test
    void eachExceptionCarriesItsKind() {
        assertThat(new SyncTimeoutException("t").kind()).isEqualTo(ErrorKind.RECOVERABLE);
        assertThat(new SyncCancelledException("c").kind()).isEqualTo(ErrorKind.CANCELLED);
        assertThat(new SyncNotSupportedException(BackendKind.CUDA, "n").kind()).isEqualTo(ErrorKind.CONFIGURATION);
        assertThat(new SyncInvalidArgumentException(BackendKind.CPU, "i").kind()).isEqualTo(ErrorKind.CONFIGURATION);
        assertThat(new DeviceLostException(BackendKind.VULKAN, "d").kind()).isEqualTo(ErrorKind.FATAL);
    }

    @Test
    void backendIsKnownWhereGivenAndEmptyOtherwise() {
        assertThat(new SyncTimeoutException("t").backend()).isEmpty();
        assertThat(new SyncTimeoutException(BackendKind.OPENCL, "t").backend()).contains(BackendKind.OPENCL);
        assertThat(new SyncNotSupportedException(BackendKind.CUDA, "libcuda.so.1 not found").backend())
                .contains(BackendKind.CUDA);
    }

    @Test
    void aBackendErrorNamesItsNativeCodeInTheMessage() {
        var e = new SyncBackendException(ErrorKind.RECOVERABLE, BackendKind.VULKAN, -1,
                "VK_ERROR_OUT_OF_HOST_MEMORY", "vkWaitSemaphores on semaphore 0x7");
        assertThat(e.nativeCode()).isEqualTo(-1);
        assertThat(e.nativeCodeName()).isEqualTo("VK_ERROR_OUT_OF_HOST_MEMORY");
        assertThat(e.getMessage()).contains("vkWaitSemaphores", "VK_ERROR_OUT_OF_HOST_MEMORY", "-1");
        assertThat(e.kind()).isEqualTo(ErrorKind.RECOVERABLE);
        assertThat(e).isInstanceOf(SyncException.class).isInstanceOf(RuntimeException.class);
    }
}
