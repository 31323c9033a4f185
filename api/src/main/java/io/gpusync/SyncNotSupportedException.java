package io.gpusync;

/**
 * The request cannot be served here: a native library or driver is missing, an extension or feature is
 * absent, or the waiter cannot do what was asked ({@link ErrorKind#CONFIGURATION}).
 */
public class SyncNotSupportedException extends SyncException {
    private static final long serialVersionUID = 1L;

    public SyncNotSupportedException(BackendKind backend, String message) {
        this(backend, message, null);
    }

    public SyncNotSupportedException(BackendKind backend, String message, Throwable cause) {
        super(ErrorKind.CONFIGURATION, backend, message, cause);
    }
}
