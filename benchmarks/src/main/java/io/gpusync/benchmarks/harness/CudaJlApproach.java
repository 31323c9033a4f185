package io.gpusync.benchmarks.harness;

import io.gpusync.SyncWaiter;
import io.gpusync.spi.Timeouts;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Alternative (c), CUDA.jl's: a wait first probes in a spin loop on its own task — 32
 * {@link Thread#onSpinWait()} spins, then 256 {@link Thread#yield()}s, probing after each — and only then is
 * handed to one of 4 blocking threads (libuv's default threadpool size, behind {@code @threadcall}) that
 * block in the native wait until it returns. A Julia task is a green thread: here each wait's spin phase
 * runs on a virtual thread (whose {@code yield} lets the other waits run). Hand-off is a FIFO shared by the
 * 4 threads; a blocked thread cannot be woken, so a cancelled wait is freed when its spin phase sees the
 * cancel, when a blocking thread takes it off the queue, or when its native wait returns.
 */
final class CudaJlApproach implements Approach {
    static final int SPINS = 32;
    static final int YIELDS = 256;
    static final int BLOCKING_THREADS = 4;
    private static final String PREFIX = "alt-c-";

    private final LinkedBlockingQueue<Wait> handoff = new LinkedBlockingQueue<>();
    private final AtomicLong holding = new AtomicLong();
    private final AtomicInteger virtualAlive = new AtomicInteger();
    private final Thread[] blockers = new Thread[BLOCKING_THREADS];
    private volatile boolean stopped;

    CudaJlApproach() {
        for (int i = 0; i < BLOCKING_THREADS; i++) {
            blockers[i] = Thread.ofPlatform().daemon(true).name(PREFIX + "block-" + i).start(this::block);
        }
    }

    @Override
    public String key() {
        return "c";
    }

    @Override
    public String label() {
        return "CUDA.jl spin+4 threads";
    }

    @Override
    public Mono<Void> await(SyncWaiter waiter, Duration timeout) {
        return Mono.create(sink -> {
            Wait w = new Wait(waiter, timeout, sink);
            holding.incrementAndGet();
            sink.onCancel(() -> w.cancelled = true);
            virtualAlive.incrementAndGet();
            Thread.ofVirtual().start(() -> {
                try {
                    spin(w);
                } finally {
                    virtualAlive.decrementAndGet();
                }
            });
        });
    }

    private void spin(Wait w) {
        for (int i = 0; i < SPINS + YIELDS; i++) {
            if (w.cancelled) {
                holding.decrementAndGet();
                return;
            }
            try {
                if (w.waiter.isSignaled()) {
                    w.sink.success();
                    holding.decrementAndGet();
                    return;
                }
            } catch (Throwable e) {
                w.sink.error(e);
                holding.decrementAndGet();
                return;
            }
            if (i < SPINS) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
        handoff.offer(w);
    }

    private void block() {
        while (!stopped) {
            Wait w;
            try {
                w = handoff.take();
            } catch (InterruptedException e) {
                continue;
            }
            try {
                if (w.cancelled) {
                    continue;
                }
                long left = w.deadline - System.nanoTime();
                w.waiter.await(Duration.ofNanos(Math.max(0, left)));
                w.sink.success();
            } catch (Throwable e) {
                w.sink.error(e);
            } finally {
                holding.decrementAndGet();
            }
        }
    }

    @Override
    public int threads() {
        // the 4 blocking threads, plus the virtual threads still in their spin phase
        return Approach.threadsNamed(PREFIX) + virtualAlive.get();
    }

    @Override
    public long holding() {
        return holding.get();
    }

    @Override
    public void close() {
        stopped = true;
        for (Thread t : blockers) {
            t.interrupt();
        }
        for (Wait w; (w = handoff.poll()) != null; ) {
            w.sink.error(new IllegalStateException("approach closed"));
        }
    }

    private static final class Wait {
        final SyncWaiter waiter;
        final long deadline;
        final MonoSink<Void> sink;
        volatile boolean cancelled;

        Wait(SyncWaiter waiter, Duration timeout, MonoSink<Void> sink) {
            this.waiter = waiter;
            this.deadline = System.nanoTime() + Math.min(Timeouts.toNanos(timeout), Long.MAX_VALUE / 4);
            this.sink = sink;
        }
    }
}
