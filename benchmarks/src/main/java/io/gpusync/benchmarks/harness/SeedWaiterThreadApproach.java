package io.gpusync.benchmarks.harness;

import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.Timeouts;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Alternative (b), gpu-handle-types' design: "one waiter thread per backend, native wait in 10 ms slices after 64
 * yields". Our reading, implemented faithfully (one instance = one backend's thread):
 * <ol>
 *   <li>new waits are queued to the thread (it notices them between steps, never while blocked);</li>
 *   <li>each step is a pass over all its waits in FIFO order: cancelled ones are dropped, each other is
 *       probed ({@code isSignaled()}), signalled ones complete, expired ones fail with a timeout;</li>
 *   <li>after a pass that completed nothing, the thread {@link Thread#yield()}s and passes again — 64 times;
 *       after that (until something completes or arrives) every idle step blocks in the native wait of the
 *       <em>oldest</em> wait for a 10 ms slice instead of yielding;</li>
 *   <li>with no waits at all the thread parks until one arrives.</li>
 * </ol>
 * Cancelling marks the wait; it is freed at the thread's next pass (after its current slice).
 */
final class SeedWaiterThreadApproach implements Approach {
    static final int YIELDS = 64;
    static final Duration SLICE = Duration.ofMillis(10);
    private static final String NAME = "alt-b-seed-waiter";

    private final Queue<Wait> incoming = new ConcurrentLinkedQueue<>();
    private final AtomicLong holding = new AtomicLong();
    private final Thread thread;
    private volatile boolean stopped;
    private volatile boolean parkedEmpty;

    SeedWaiterThreadApproach() {
        thread = Thread.ofPlatform().daemon(true).name(NAME).start(this::run);
    }

    @Override
    public String key() {
        return "b";
    }

    @Override
    public String label() {
        return "seed waiter thread";
    }

    @Override
    public Mono<Void> await(SyncWaiter waiter, Duration timeout) {
        return Mono.create(sink -> {
            Wait w = new Wait(waiter, timeout, sink);
            holding.incrementAndGet();
            sink.onCancel(() -> w.cancelled = true);
            incoming.offer(w);
            if (parkedEmpty) {
                LockSupport.unpark(thread);
            }
        });
    }

    private void run() {
        ArrayList<Wait> active = new ArrayList<>();
        int yields = 0;
        while (!stopped) {
            boolean arrived = false;
            for (Wait w; (w = incoming.poll()) != null; ) {
                active.add(w);
                arrived = true;
            }
            if (active.isEmpty()) {
                parkedEmpty = true;
                if (incoming.isEmpty() && !stopped) {
                    LockSupport.park(this);
                }
                parkedEmpty = false;
                yields = 0;
                continue;
            }
            if (arrived) {
                yields = 0;
            }
            int completed = pass(active);
            if (completed > 0) {
                yields = 0;
                continue;
            }
            if (active.isEmpty()) {
                continue;
            }
            if (yields < YIELDS) {
                yields++;
                Thread.yield();
                continue;
            }
            Wait oldest = active.get(0);
            try {
                long left = oldest.deadline - System.nanoTime();
                oldest.waiter.await(Duration.ofNanos(Math.max(1, Math.min(SLICE.toNanos(), left))));
            } catch (SyncTimeoutException sliceOver) {
                // the next pass probes everything again
            } catch (Throwable e) {
                if (!oldest.cancelled) {
                    oldest.sink.error(e);
                }
                oldest.failed = true;
            }
        }
        for (Wait w : active) {
            w.sink.error(new IllegalStateException("approach closed"));
        }
    }

    /** One FIFO pass; compacts {@code active} in place (order kept). @return waits completed */
    private int pass(ArrayList<Wait> active) {
        int completed = 0;
        int keep = 0;
        long now = System.nanoTime();
        for (int i = 0, n = active.size(); i < n; i++) {
            Wait w = active.get(i);
            boolean done;
            if (w.cancelled || w.failed) {
                done = true;
            } else {
                try {
                    if (w.waiter.isSignaled()) {
                        w.sink.success();
                        completed++;
                        done = true;
                    } else if (now - w.deadline >= 0) {
                        w.sink.error(new SyncTimeoutException(w.waiter.backend(),
                                w.waiter + " not signalled within " + Timeouts.describe(w.timeout)));
                        done = true;
                    } else {
                        done = false;
                    }
                } catch (Throwable e) {
                    w.sink.error(e);
                    done = true;
                }
            }
            if (done) {
                holding.decrementAndGet();
            } else {
                active.set(keep++, w);
            }
        }
        active.subList(keep, active.size()).clear();
        return completed;
    }

    @Override
    public int threads() {
        return Approach.threadsNamed(NAME);
    }

    @Override
    public long holding() {
        return holding.get();
    }

    @Override
    public void close() {
        stopped = true;
        LockSupport.unpark(thread);
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class Wait {
        final SyncWaiter waiter;
        final Duration timeout;
        final long deadline;
        final MonoSink<Void> sink;
        volatile boolean cancelled;
        boolean failed;

        Wait(SyncWaiter waiter, Duration timeout, MonoSink<Void> sink) {
            this.waiter = waiter;
            this.timeout = timeout;
            long nanos = Timeouts.toNanos(timeout);
            this.deadline = System.nanoTime() + Math.min(nanos, Long.MAX_VALUE / 4);
            this.sink = sink;
        }
    }
}
