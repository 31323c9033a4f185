package io.gpusync.cuda;

import io.gpusync.SyncCancelledException;

/**
 * The lifetime of a {@link CudaPointOwner}: while it is open its points wait normally; once it ends, every wait on
 * them fails with {@link SyncCancelledException} — registrations behind stream callbacks at once
 * ({@link StreamCallbacks#failOwner}), probes and later registrations on their next call ({@link #check()}). The
 * native objects themselves stay valid until their anchors are released, so nothing is touched after it is freed.
 * Thread-safe.
 */
final class OwnerLifetime {
    private final CudaDriverService service;
    private final String what;
    private volatile boolean ended;

    OwnerLifetime(CudaDriverService service, String what) {
        this.service = service;
        this.what = what;
    }

    /** Throws {@link SyncCancelledException} if the producer has ended. */
    void check() {
        if (ended) {
            throw cancelled();
        }
    }

    boolean ended() {
        return ended;
    }

    SyncCancelledException cancelled() {
        return new SyncCancelledException(what + " was closed while this wait was pending");
    }

    /** Ends the lifetime and fails every stream-callback registration made under it. Idempotent. */
    void end() {
        ended = true;
        service.callbacks().failOwner(this, cancelled());
    }

    @Override
    public String toString() {
        return what;
    }
}
