package io.gpusync;

/**
 * A handle, value or option handed to gpusync is invalid for the request (a NULL handle, a point without
 * a value asked to rebind, a value lowered on a timeline) — {@link ErrorKind#CONFIGURATION}.
 */
public class SyncInvalidArgumentException extends SyncException {
    private static final long serialVersionUID = 1L;

    public SyncInvalidArgumentException(BackendKind backend, String message) {
        super(ErrorKind.CONFIGURATION, backend, message, null);
    }
}
