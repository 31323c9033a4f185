package io.gpusync.reactor;

import reactor.core.publisher.Mono;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Disposing one engine ({@link SyncEngine#dispose()}, {@link SyncEngine#disposeGracefully()}): ends its pending
 * waits, tells its timeout queues, strategies and loops to stop — none of which waits — and then waits for its
 * threads only where the caller may block. Thread-safe: the first call disposes, the others find it done.
 */
final class EngineDisposal {
    private static final System.Logger LOG = System.getLogger(SyncEngine.class.getName());
    private static final long BLOCKING_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final String engine;
    private final PendingWaits pending;
    private final EngineTimeouts timeouts;
    private final List<WaitStrategy> strategies;
    private final EngineLoops loops;
    private final EngineThreads threads;
    private final AtomicBoolean started = new AtomicBoolean();
    private volatile boolean disposed;

    EngineDisposal(String engine, PendingWaits pending, EngineTimeouts timeouts,
                   List<WaitStrategy> strategies, EngineLoops loops, EngineThreads threads) {
        this.engine = engine;
        this.pending = pending;
        this.timeouts = timeouts;
        this.strategies = strategies;
        this.loops = loops;
        this.threads = threads;
    }

    /** Whether disposal has started (set before any pending wait is ended). */
    boolean isDisposed() {
        return disposed;
    }

    /**
     * Disposes; then, unless the calling thread is non-blocking or one of the engine's, waits (5 s at most) for the
     * engine's threads to end.
     */
    void dispose() {
        if (start() && !NonBlockingThreads.isCurrent() && !threads.isCurrent()) {
            threads.awaitEnded(System.nanoTime() + BLOCKING_WAIT_NANOS);
        }
    }

    /** Disposes at subscription, and completes when every thread of the engine has ended; never blocks. */
    Mono<Void> gracefully() {
        return Mono.defer(() -> {
            start();
            return threads.ended();
        });
    }

    /** Ends every pending wait and tells every thread to stop, without waiting; {@code false} if done before. */
    private boolean start() {
        if (!started.compareAndSet(false, true)) {
            return false;
        }
        disposed = true; // before the snapshot: a wait that a subscriber adds after it sees this flag
        for (PendingWait w : pending.snapshot()) {
            w.engineDisposed();
        }
        timeouts.dispose();
        for (WaitStrategy s : strategies) {
            try {
                s.shutdown();
            } catch (Throwable e) {
                LOG.log(System.Logger.Level.WARNING, "stopping " + s.path() + " of engine " + engine + " failed", e);
            }
        }
        try {
            loops.shutdown();
        } catch (Throwable e) {
            LOG.log(System.Logger.Level.WARNING, "stopping the event loops of engine " + engine + " failed", e);
        }
        return true;
    }
}
