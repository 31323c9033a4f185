package io.gpusync.reactor;

import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/** The engine's rules for bad arguments, shared by {@link SyncEngine}, its operators and its builder. */
final class WaitArguments {
    private WaitArguments() {
    }

    /**
     * The rule for bad arguments, shared by every operator: a null argument (or a null element of a collection
     * argument) throws {@link NullPointerException} at assembly, as in Reactor; the copy of the collection's
     * elements is returned.
     */
    static List<SyncPoint> requireMembers(Collection<? extends SyncPoint> points, Duration timeout) {
        Objects.requireNonNull(points, "points");
        Objects.requireNonNull(timeout, "timeout");
        List<SyncPoint> members = new ArrayList<>(points.size());
        int i = 0;
        for (SyncPoint p : points) {
            members.add(Objects.requireNonNull(p, "points contains null (element " + i + ")"));
            i++;
        }
        return members;
    }

    /**
     * The rule for bad values: a {@code Mono} that fails each subscriber with a new
     * {@link SyncInvalidArgumentException} ({@link io.gpusync.ErrorKind#CONFIGURATION}) through {@code onError}.
     */
    static <T> Mono<T> invalidTimeout(Duration timeout) {
        return Mono.error(() -> negativeTimeout(timeout));
    }

    /** The error of a negative {@code timeout}, for every API of the engine (Mono, block, future). */
    static SyncInvalidArgumentException negativeTimeout(Duration timeout) {
        return new SyncInvalidArgumentException(null, "timeout must not be negative: " + timeout);
    }

    /** {@code n} if positive, else an {@link IllegalArgumentException} naming {@code what}. */
    static int positive(int n, String what) {
        if (n <= 0) {
            throw new IllegalArgumentException(what + " must be positive: " + n);
        }
        return n;
    }
}
