package io.gpusync;

/** The wait was cancelled, or the engine serving it was disposed ({@link ErrorKind#CANCELLED}). */
public class SyncCancelledException extends SyncException {
    private static final long serialVersionUID = 1L;

    public SyncCancelledException(String message) {
        super(ErrorKind.CANCELLED, null, message, null);
    }
}
