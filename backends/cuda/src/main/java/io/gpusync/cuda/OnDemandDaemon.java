package io.gpusync.cuda;

import java.util.concurrent.locks.LockSupport;

/**
 * A daemon thread started by its first {@link #wake()} and unparked by every later one: the CUDA backend's
 * housekeeping threads ({@code gpusync-cuda-fault-watch}, {@code gpusync-cuda-armer}) cost nothing until they are
 * needed, and park (no timeout) while they have nothing to do. Thread-safe; {@link #wake()} never blocks.
 */
final class OnDemandDaemon {
    private final String name;
    private final Runnable body;
    private volatile Thread thread;

    OnDemandDaemon(String name, Runnable body) {
        this.name = name;
        this.body = body;
    }

    /** Starts the thread if it has not started yet, else unparks it. */
    void wake() {
        Thread t = thread;
        if (t == null) {
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

    /** The thread, null before the first {@link #wake()}. */
    Thread thread() {
        return thread;
    }

    /** Unparks the thread if it has started (never starts it). */
    void unparkIfStarted() {
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }
}
