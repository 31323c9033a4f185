package io.gpusync.spi;

import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The seed's "lifetime anchor": keeps a native primitive alive while anything may still use it and releases
 * it exactly once afterwards.
 *
 * <p>The anchor counts <em>claims</em> (one per waiter view of the primitive: a waiter and every waiter
 * rebound from it) and <em>waits in progress</em>. When the count reaches zero the release action runs, once,
 * on the thread that dropped the last hold; no claim or wait can start after that. Each claim is registered
 * with a {@link Cleaner} on its owning waiter, so a waiter that is never closed still drops its claim when it
 * becomes unreachable.
 *
 * <p>The release action must not refer to the owning waiter (that would keep it reachable forever) and must
 * not block on the GPU. A {@linkplain #borrowed borrowed} anchor releases nothing: the caller owns the
 * primitive.
 *
 * <p>Thread-safe and lock-free.
 */
public final class NativeAnchor {
    private static final Cleaner CLEANER = Cleaner.create(runnable -> {
        Thread t = new Thread(runnable, "gpusync-cleaner");
        t.setDaemon(true);
        return t;
    });
    private static final System.Logger LOG = System.getLogger(NativeAnchor.class.getName());

    private final String what;
    private final Runnable release;
    private final AtomicLong holds = new AtomicLong(0);
    private volatile boolean released;
    private volatile boolean claimedOnce;

    private NativeAnchor(String what, Runnable release) {
        this.what = what;
        this.release = release;
    }

    /** An anchor whose primitive gpusync owns and releases with {@code release}. */
    public static NativeAnchor owned(String what, Runnable release) {
        return new NativeAnchor(what, java.util.Objects.requireNonNull(release, "release"));
    }

    /** An anchor over a borrowed primitive: the caller destroys it, gpusync never does. */
    public static NativeAnchor borrowed(String what) {
        return new NativeAnchor(what, null);
    }

    /** Whether the primitive has been released (or, for a borrowed one, given up). */
    public boolean isReleased() {
        return released;
    }

    /** Whether gpusync owns (and will release) the primitive. */
    public boolean isOwned() {
        return release != null;
    }

    /** What this anchor holds, for messages. */
    public String describe() {
        return what;
    }

    /**
     * A new claim for {@code owner} (a waiter view). The first claim may be taken on a fresh anchor; later
     * ones only while the primitive is alive.
     *
     * @throws IllegalStateException if the primitive has already been released
     */
    public Claim claim(Object owner) {
        if (!tryHold()) {
            throw new IllegalStateException(what + " has been released");
        }
        return new Claim(owner);
    }

    private boolean tryHold() {
        while (true) {
            long n = holds.get();
            if (n == 0 && (claimedOnce || released)) {
                return false;
            }
            if (holds.compareAndSet(n, n + 1)) {
                claimedOnce = true;
                return true;
            }
        }
    }

    private void drop() {
        long left = holds.decrementAndGet();
        if (left == 0) {
            released = true;
            if (release != null) {
                try {
                    release.run();
                } catch (RuntimeException | Error e) {
                    LOG.log(System.Logger.Level.WARNING, "releasing " + what + " failed", e);
                }
            }
        } else if (left < 0) {
            throw new IllegalStateException("unbalanced release of " + what);
        }
    }

    /**
     * One view's hold on the primitive. {@link #enter()} / {@link #exit()} bracket a wait in progress;
     * {@link #close()} drops the view's hold (idempotent).
     */
    public final class Claim implements AutoCloseable {
        private final AtomicBoolean closed = new AtomicBoolean();
        private final Cleaner.Cleanable cleanable;

        private Claim(Object owner) {
            this.cleanable = CLEANER.register(owner, new DropOnce(NativeAnchor.this, closed));
        }

        /** The anchor this claim holds. */
        public NativeAnchor anchor() {
            return NativeAnchor.this;
        }

        /**
         * Starts a wait in progress: the primitive is not released before the matching {@link #exit()}.
         *
         * @throws IllegalStateException if this claim is closed or the primitive released
         */
        public void enter() {
            if (closed.get() || !tryHold()) {
                throw new IllegalStateException(what + " is closed");
            }
        }

        /** Ends a wait started by {@link #enter()}. */
        public void exit() {
            drop();
        }

        /** Whether {@link #close()} has been called (or the owner was cleaned). */
        public boolean isClosed() {
            return closed.get();
        }

        @Override
        public void close() {
            cleanable.clean();
        }
    }

    private record DropOnce(NativeAnchor anchor, AtomicBoolean closed) implements Runnable {
        @Override
        public void run() {
            if (closed.compareAndSet(false, true)) {
                anchor.drop();
            }
        }
    }
}
