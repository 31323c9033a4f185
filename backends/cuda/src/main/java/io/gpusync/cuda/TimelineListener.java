package io.gpusync.cuda;

import io.gpusync.SyncException;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.CallbackRegistration;
import io.gpusync.spi.SignalListener;

import java.util.Comparator;

/**
 * A listener registered on a {@link TimelineState} for a target value, ordered by (unsigned target, sequence). Whoever
 * removes it from its state completes or cancels it, so it ends once. Thread-safe; never blocks.
 */
final class TimelineListener implements CallbackRegistration {
    static final Comparator<TimelineListener> ORDER = (a, b) -> {
        int c = Long.compareUnsigned(a.target, b.target);
        return c != 0 ? c : Long.compare(a.seq, b.seq);
    };
    final long target;
    final long seq;
    private final TimelineState state;
    SignalListener listener;
    NativeAnchor.Claim claim;

    TimelineListener(long target, long seq, TimelineState state) {
        this.target = target;
        this.seq = seq;
        this.state = state;
    }

    /** Completes this registration once (signalled when {@code error} is null); false if already gone. */
    boolean complete(SyncException error) {
        if (state == null || !state.removeListener(this)) {
            return false;
        }
        try {
            if (error == null) {
                listener.signalled();
            } else {
                listener.failed(error);
            }
        } finally {
            if (claim != null) {
                claim.exit();
            }
        }
        return true;
    }

    @Override
    public void cancel() {
        if (state != null && state.removeListener(this) && claim != null) {
            claim.exit();
        }
    }
}
