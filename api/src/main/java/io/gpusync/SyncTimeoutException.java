package io.gpusync;

/**
 * The sync point was not signalled within the requested timeout ({@link ErrorKind#RECOVERABLE}). Custom
 * waiters throw it from {@link SyncWaiter#await} so that {@link SyncWaiter#isSignaled()} maps it to
 * {@code false}.
 */
public class SyncTimeoutException extends SyncException {
    private static final long serialVersionUID = 1L;

    /** A timeout with an unknown backend. */
    public SyncTimeoutException(String message) {
        this(null, message);
    }

    /** A timeout on {@code backend}. */
    public SyncTimeoutException(BackendKind backend, String message) {
        super(ErrorKind.RECOVERABLE, backend, message, null);
    }
}
