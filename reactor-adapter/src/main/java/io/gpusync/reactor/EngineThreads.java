package io.gpusync.reactor;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Names, creates and keeps track of one engine's platform daemon threads ({@code gpusync-<engine>-<role>-<n>}),
 * so that disposal can tell when they have all ended: {@link #awaitEnded} for a caller that may block,
 * {@link #ended()} for one that may not. Every thread a {@link #role} factory makes must be started.
 *
 * <p>A backend may lend threads of its own ({@link io.gpusync.spi.BlockingWaiter#waitThreads()}): a task
 * {@link #lend lent} to one counts as one of this engine's threads until it returns, for disposal and for
 * {@link #isCurrent()}, though the thread itself lives on.
 *
 * <p>Thread-safe and lock-free: making a thread adds it to a concurrent queue (dropping threads that have
 * ended), so a subscribing event loop that starts a thread takes no lock.
 */
final class EngineThreads {
    /** How often disposal looks whether the lent tasks have returned. */
    private static final long LENT_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private final String engine;
    /** Threads made, alive or ended since the last thread was made. */
    private final Queue<Thread> made = new ConcurrentLinkedQueue<>();
    private final Sinks.Empty<Void> allEnded = Sinks.empty();
    private final AtomicBoolean watching = new AtomicBoolean();
    /** Lent tasks handed over and not yet returned (queued in the lender or running). */
    private final AtomicInteger lentTasks = new AtomicInteger();
    /** The threads running a lent task now. */
    private final Set<Thread> lentThreads = ConcurrentHashMap.newKeySet();

    EngineThreads(String engine) {
        this.engine = engine;
    }

    /** A factory of this engine's threads of one role ({@code loop}, {@code waiter}, …). */
    ThreadFactory role(String role) {
        String prefix = "gpusync-" + engine + "-" + role + "-";
        AtomicInteger count = new AtomicInteger();
        return r -> {
            Thread t = Thread.ofPlatform().name(prefix + count.incrementAndGet()).daemon(true).unstarted(r);
            t.setUncaughtExceptionHandler((th, e) -> System.getLogger(SyncEngine.class.getName())
                    .log(System.Logger.Level.ERROR, "uncaught in " + th.getName(), e));
            made.removeIf(old -> old.getState() == Thread.State.TERMINATED);
            made.add(t);
            return t;
        };
    }

    /**
     * Hands {@code task} to {@code lender}, a backend's threads; {@code false} if the lender refused it (a
     * {@link java.util.concurrent.RejectedExecutionException}, or any other runtime exception: the task is not
     * counted then). Never blocks, if the lender keeps its contract.
     */
    boolean lend(Executor lender, Runnable task) {
        lentTasks.incrementAndGet();
        try {
            lender.execute(() -> {
                Thread me = Thread.currentThread();
                lentThreads.add(me);
                try {
                    task.run();
                } finally {
                    lentThreads.remove(me);
                    lentTasks.decrementAndGet();
                }
            });
            return true;
        } catch (RuntimeException refused) {
            lentTasks.decrementAndGet();
            return false;
        } catch (Error e) {
            lentTasks.decrementAndGet();
            throw e;
        }
    }

    /** Whether the calling thread is one of this engine's, or runs a task lent by it. */
    boolean isCurrent() {
        Thread me = Thread.currentThread();
        return made.contains(me) || lentThreads.contains(me);
    }

    /**
     * Blocks until every thread made (but the calling one) has ended and every lent task has returned, or until
     * {@code deadlineNanos} ({@link System#nanoTime()}). For disposal on a thread that may block and is not
     * {@link #isCurrent() this engine's}; the threads must have been told to stop.
     */
    void awaitEnded(long deadlineNanos) {
        boolean interrupted = false;
        for (Thread t : made) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                break;
            }
            if (t == Thread.currentThread()) {
                continue;
            }
            try {
                t.join(java.time.Duration.ofNanos(left));
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        while (lentTasks.get() > 0 && deadlineNanos - System.nanoTime() > 0) {
            LockSupport.parkNanos(LENT_POLL_NANOS); // a lent task ends with its wait's slice: disposal only
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Completes once every thread made has ended and every lent task has returned; the threads must have been told
     * to stop. The first call starts a virtual thread that joins them (the subscribing thread never blocks) and
     * completes every subscriber, past and future; a subscriber that comes after that is completed at once, on its
     * own thread.
     */
    Mono<Void> ended() {
        if (watching.compareAndSet(false, true)) {
            Thread.ofVirtual().name("gpusync-" + engine + " disposal").start(this::joinAll);
        }
        return allEnded.asMono();
    }

    private void joinAll() {
        long unstartedDeadline = 0;
        while (true) {
            boolean joined = false;
            boolean unstarted = false;
            for (Thread t : made) {
                switch (t.getState()) {
                    case TERMINATED -> { }
                    case NEW -> unstarted = true;
                    default -> {
                        joined = true;
                        try {
                            t.join();
                        } catch (InterruptedException e) {
                            // nobody but this class knows the thread: keep joining
                        }
                    }
                }
            }
            if (joined) {
                continue; // look again: a thread made while the engine was being disposed is joined too
            }
            if (lentTasks.get() > 0) {
                LockSupport.parkNanos(LENT_POLL_NANOS); // nothing to join on a lent thread: look again shortly
                continue;
            }
            if (!unstarted) {
                break;
            }
            // made and about to be started (microseconds), or never started (its start failed): wait 1 s at most
            long now = System.nanoTime();
            if (unstartedDeadline == 0) {
                unstartedDeadline = now + TimeUnit.SECONDS.toNanos(1);
            } else if (now - unstartedDeadline > 0) {
                break;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        allEnded.tryEmitEmpty();
    }
}
