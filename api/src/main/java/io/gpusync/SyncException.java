package io.gpusync;

import java.util.Objects;
import java.util.Optional;

/**
 * Base of every error gpusync reports: unchecked, with an {@link ErrorKind} that tells the caller how to
 * react and the {@link BackendKind} where it is known. Messages say what was waited on and, for driver
 * failures, the native code.
 *
 * <p>Instances are immutable and may be delivered to any thread (a Reactor subscriber's {@code onError}
 * included).
 */
public class SyncException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorKind kind;
    private final transient BackendKind backend;

    /**
     * @param kind    how to react
     * @param backend where it happened, or {@code null} if unknown
     * @param message what was waited on and what went wrong
     * @param cause   the underlying cause, or {@code null}
     */
    public SyncException(ErrorKind kind, BackendKind backend, String message, Throwable cause) {
        super(message, cause);
        this.kind = Objects.requireNonNull(kind, "kind");
        this.backend = backend;
    }

    /** How the caller should react. */
    public ErrorKind kind() {
        return kind;
    }

    /** The backend where the error happened, when known. */
    public Optional<BackendKind> backend() {
        return Optional.ofNullable(backend);
    }
}
