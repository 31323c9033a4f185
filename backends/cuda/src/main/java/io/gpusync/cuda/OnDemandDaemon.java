package io.gpusync.cuda;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A daemon thread started by its first {@link #wake()} and unparked by every later one: the CUDA backend's
 * housekeeping threads ({@code gpusync-cuda-fault-watch}, {@code gpusync-cuda-armer}) cost nothing until they are
 * needed, and park (no timeout) while they have nothing to do.
 *
 * <p><b>Closing.</b> After {@link #close()} the thread ends the next time it is idle ({@link #endIfClosing}), so
 * closing never abandons work in hand; a later {@link #wake()} starts a fresh thread, which ends when idle in turn.
 * Once closing, {@link #wake()} and the end of the thread exclude each other, so no wake-up is lost to a thread
 * that is ending.
 *
 * <p>Thread-safe; {@link #wake()} never blocks except, once closing, for that brief exclusion.
 */
final class OnDemandDaemon {
    private final String name;
    private final Runnable body;
    private volatile Thread thread;
    private volatile boolean closing;

    OnDemandDaemon(String name, Runnable body) {
        this.name = name;
        this.body = body;
    }

    /** Starts the thread if it is not running, else unparks it. */
    void wake() {
        Thread t = thread;
        if (t == null || closing) {
            synchronized (this) {
                t = thread;
                if (t == null) {
                    t = new Thread(body, name);
                    t.setDaemon(true);
                    thread = t;
                    t.start();
                    return;
                }
            }
        }
        LockSupport.unpark(t);
    }

    /** Unparks the thread if it is running (never starts it). */
    void unparkIfStarted() {
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** From now on the thread ends whenever it is idle (see the class comment). Idempotent; never blocks. */
    void close() {
        closing = true;
        unparkIfStarted();
    }

    /**
     * Called by the body where it would park without a timeout: {@code true} if the daemon is closing and
     * {@code idle} still holds, and the body must then return (the thread is forgotten, a later wake starts another).
     */
    boolean endIfClosing(BooleanSupplier idle) {
        if (!closing) {
            return false;
        }
        synchronized (this) {
            if (!idle.getAsBoolean()) {
                return false;
            }
            thread = null;
            return true;
        }
    }

    /** The running thread, null before the first {@link #wake()} and after it ended. */
    Thread thread() {
        return thread;
    }
}
