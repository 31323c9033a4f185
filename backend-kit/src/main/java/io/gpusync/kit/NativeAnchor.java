package io.gpusync.kit;

import io.gpusync.internal.Housekeeping;
import io.gpusync.internal.ProcessServices;
import io.gpusync.internal.UpcallRegistry;

import java.lang.ref.Cleaner;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * gpu-handle-types' "lifetime anchor": keeps a native primitive alive while anything may still use it and releases
 * it exactly once afterwards.
 *
 * <p>The anchor counts <em>claims</em> (one per waiter view of the primitive: a waiter and every waiter
 * rebound from it) and <em>waits in progress</em>. When the count reaches zero the release action runs,
 * once; no claim or wait can start after that. Each claim is registered with a {@link Cleaner} on its owning
 * waiter, so a waiter that is never closed still drops its claim when it becomes unreachable.
 *
 * <p><b>Where the release runs.</b> An {@link #adopt} release — a quick, non-blocking destroy call — runs on
 * the thread that dropped the last hold, except when that thread must not make driver calls: inside a
 * driver's upcall ({@link UpcallRegistry#inUpcall()}) or on gpusync's {@code Cleaner} thread; it then runs on
 * gpusync's housekeeping thread of the release's backend (its lane, by the release action's package, or for a
 * borrowed anchor by the backend it names). A {@link #adoptBlocking} release (one that may wait: a
 * {@code vkDeviceWaitIdle}, an EGL context bind) always runs on a housekeeping thread, so it never blocks a driver
 * thread, an event loop or the {@code Cleaner}.
 * {@link #isReleased()} turns {@code true} when the last hold drops, possibly just before a moved release has
 * run; {@link #whenReleased()} completes after the release action has returned (for a borrowed anchor: once the
 * last hold drops), on the thread the release runs on by the rule above.
 *
 * <p>The release action must not refer to the owning waiter (that would keep it reachable forever) and must
 * not wait for the GPU without a bound. A {@linkplain #borrow borrowed} anchor releases nothing: the caller
 * owns the primitive.
 *
 * <p>Thread-safe and lock-free.
 */
public final class NativeAnchor {
    private static final System.Logger LOG = System.getLogger(NativeAnchor.class.getName());

    private final String what;
    private final Runnable release;
    private final Object lane;
    private final boolean mayBlock;
    private final AtomicLong holds = new AtomicLong(0);
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private volatile boolean released;
    private volatile boolean claimedOnce;

    private NativeAnchor(String what, Runnable release, Object lane, boolean mayBlock) {
        this.what = what;
        this.release = release;
        this.lane = lane;
        this.mayBlock = mayBlock;
    }

    /**
     * An anchor whose primitive gpusync adopts and releases with {@code release}, a quick call that does not
     * block (see the class comment for the thread it runs on).
     */
    public static NativeAnchor adopt(String what, Runnable release) {
        return new NativeAnchor(what, Objects.requireNonNull(release, "release"), release, false);
    }

    /**
     * An anchor whose primitive gpusync adopts and whose {@code release} may block (waits for the device to
     * go idle, binds a context): it always runs on gpusync's housekeeping thread.
     */
    public static NativeAnchor adoptBlocking(String what, Runnable release) {
        return new NativeAnchor(what, Objects.requireNonNull(release, "release"), release, true);
    }

    /**
     * An anchor over a borrowed primitive: the caller destroys it, gpusync never does. {@code backend} is a class
     * of the borrowing backend: when the last hold drops where no driver call may be made, {@link #whenReleased()}
     * completes in that backend's housekeeping lane, so a dependant that never returns holds up no other backend.
     */
    public static NativeAnchor borrow(Class<?> backend, String what) {
        return new NativeAnchor(what, null, Objects.requireNonNull(backend, "backend"), false);
    }

    /** Whether the primitive has been released (or, for a borrowed one, given up). */
    public boolean isReleased() {
        return released;
    }

    /**
     * Completes once the last hold has dropped and the release action (if any) has returned: from then on
     * gpusync makes no call on the primitive, so the owner of a borrowed one may destroy it. Completes on the
     * thread that runs the release (see the class comment); dependants that block belong on an executor of
     * their own. The stage cannot be completed by its callers.
     */
    public CompletionStage<Void> whenReleased() {
        return done.minimalCompletionStage();
    }

    /** Whether gpusync adopted (and will release) the primitive. */
    public boolean isAdopted() {
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
            // a borrowed anchor runs no release, but whoever waits for it to be let go runs code here
            if (mayBlock ? !Housekeeping.isCurrentThread()
                    : UpcallRegistry.inUpcall() || Thread.currentThread() instanceof CleanerThread) {
                Housekeeping.execute(lane, this::runRelease); // the backend's lane
            } else {
                runRelease();
            }
        } else if (left < 0) {
            throw new IllegalStateException("unbalanced release of " + what);
        }
    }

    private void runRelease() {
        try {
            if (release != null) {
                release.run();
            }
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.WARNING, "releasing " + what + " failed", e);
        } finally {
            done.complete(null);
        }
    }

    @Override
    public String toString() {
        return "NativeAnchor[" + what + "]";
    }

    /**
     * One view's hold on the primitive. {@link #enter()} / {@link #exit()} bracket a wait in progress;
     * {@link #close()} drops the view's hold (idempotent).
     */
    public final class Claim implements AutoCloseable {
        private final AtomicBoolean closed = new AtomicBoolean();
        private final Cleaner.Cleanable cleanable;

        private Claim(Object owner) {
            this.cleanable = ClaimCleaner.process().cleaner.register(owner, new DropOnce(NativeAnchor.this, closed));
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

        /**
         * Runs {@code action} inside {@link #enter()} / {@link #exit()}: the primitive stays alive until it
         * returns or throws.
         *
         * @throws IllegalStateException if this claim is closed or the primitive released (the action
         *                               does not run)
         */
        public <T> T call(Supplier<T> action) {
            enter();
            try {
                return action.get();
            } finally {
                exit();
            }
        }

        /** {@link #call} for an action without a result. */
        public void run(Runnable action) {
            enter();
            try {
                action.run();
            } finally {
                exit();
            }
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

    /** The process's one {@link Cleaner} of claims, a {@link ProcessServices} service. */
    private static final class ClaimCleaner {
        final Cleaner cleaner = Cleaner.create(CleanerThread::new);

        static ClaimCleaner process() {
            return ProcessServices.get().service(ClaimCleaner.class, ClaimCleaner::new);
        }
    }

    /** The {@link Cleaner}'s thread: releases dropped here move to the housekeeping thread. */
    private static final class CleanerThread extends Thread {
        CleanerThread(Runnable task) {
            super(task, "gpusync-cleaner");
            setDaemon(true);
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
