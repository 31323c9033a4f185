package io.gpusync;

/**
 * The device or context behind the wait is gone ({@link ErrorKind#FATAL}): Vulkan
 * {@code VK_ERROR_DEVICE_LOST}, a sticky CUDA context error, a failed {@code CpuTimeline}. Every later wait
 * on the same device fails too; callers that poll must stop.
 */
public class DeviceLostException extends SyncException {
    private static final long serialVersionUID = 1L;

    public DeviceLostException(BackendKind backend, String message) {
        this(backend, message, null);
    }

    public DeviceLostException(BackendKind backend, String message, Throwable cause) {
        super(ErrorKind.FATAL, backend, message, cause);
    }
}
