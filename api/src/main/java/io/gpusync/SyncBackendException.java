package io.gpusync;

import java.util.Objects;

/**
 * A native call failed with a code that has no more specific exception: carries the numeric code and
 * its name (e.g. {@code -5 VK_ERROR_OUT_OF_DEVICE_MEMORY}, {@code 700 CUDA_ERROR_ILLEGAL_ADDRESS}); its
 * {@link ErrorKind} is chosen by the backend from the code.
 */
public class SyncBackendException extends SyncException {
    private static final long serialVersionUID = 1L;

    private final long nativeCode;
    private final String nativeCodeName;

    public SyncBackendException(ErrorKind kind, BackendKind backend, long nativeCode, String nativeCodeName,
                                String message) {
        super(kind, Objects.requireNonNull(backend, "backend"),
                message + " (" + nativeCodeName + " = " + nativeCode + ")", null);
        this.nativeCode = nativeCode;
        this.nativeCodeName = nativeCodeName;
    }

    /** The native return or status code, as the API defines it. */
    public long nativeCode() {
        return nativeCode;
    }

    /** The symbolic name of {@link #nativeCode()}, e.g. {@code VK_ERROR_OUT_OF_HOST_MEMORY}. */
    public String nativeCodeName() {
        return nativeCodeName;
    }
}
