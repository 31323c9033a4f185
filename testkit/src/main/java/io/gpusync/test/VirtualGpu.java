package io.gpusync.test;

import io.gpusync.SyncPoint;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A GPU whose work takes virtual time: its queues are {@link FakeGpuQueue}s on a {@link VirtualTimeScheduler}, so
 * a point completes exactly when the test moves the clock past the end of its work, never on its own. Made inside
 * {@code StepVerifier.withVirtualTime(() -> ...)}, {@link #create()} joins the clock that StepVerifier installed,
 * and {@code thenAwait(d)} runs the GPU forward by {@code d}:
 *
 * <pre>{@code
 * StepVerifier.withVirtualTime(() -> {
 *             VirtualGpu gpu = VirtualGpu.create();
 *             return GpuSync.await(gpu.queue().submit(Duration.ofSeconds(2)));
 *         })
 *         .expectSubscription()
 *         .expectNoEvent(Duration.ofSeconds(1))   // half-way: the kernel still runs
 *         .thenAwait(Duration.ofSeconds(1))
 *         .verifyComplete();
 * }</pre>
 *
 * <p>Timeouts follow the same clock: the default engine times waits out on {@code Schedulers.parallel()}, which
 * {@code withVirtualTime} replaces, so {@code GpuSync.await(point, timeout)} fails with a timeout once the test
 * moves the clock past it, as {@code Mono.timeout} does. The engine still hands a completion over to its own
 * (real) thread, so the verifier sees it a moment after the clock moved: expect it with {@code expectComplete},
 * not with a zero-time {@code expectNoEvent} after it.
 *
 * <p><b>Threading.</b> Thread-safe. Points complete, and the callbacks registered on them run, on the thread
 * that advances the clock ({@link #advance}, {@code StepVerifier.thenAwait}); waits that park a thread are woken
 * from it. <b>Blocking.</b> Nothing here blocks: a thread that blocks on a point before the clock moves past it
 * waits until another thread advances the clock. <b>Cancellation.</b> Cancelling a wait leaves the work
 * scheduled; {@link #loseDevice} and {@link #close()} fail every point not yet completed, on every queue.
 */
public final class VirtualGpu implements AutoCloseable {
    private final VirtualTimeScheduler clock;
    private final FakeGpuQueue queue;
    private final List<FakeGpuQueue> queues = new CopyOnWriteArrayList<>();

    private VirtualGpu(VirtualTimeScheduler clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.queue = newQueue();
    }

    /** A GPU on {@code clock}. */
    public static VirtualGpu on(VirtualTimeScheduler clock) {
        return new VirtualGpu(clock);
    }

    /**
     * A GPU on the installed virtual clock ({@link VirtualTimeScheduler#getOrSet()}): inside
     * {@code StepVerifier.withVirtualTime}, the verifier's own clock; elsewhere a new one is installed as every
     * Reactor scheduler until {@link VirtualTimeScheduler#reset()}.
     */
    public static VirtualGpu create() {
        return new VirtualGpu(VirtualTimeScheduler.getOrSet());
    }

    /** The GPU's first queue. */
    public FakeGpuQueue queue() {
        return queue;
    }

    /** Another queue of this GPU: it runs beside the others (its work does not wait for theirs). */
    public FakeGpuQueue newQueue() {
        FakeGpuQueue q = FakeGpuQueue.named(clock, "VirtualGpu queue " + queues.size());
        queues.add(q);
        return q;
    }

    /** Submits work of {@code duration} to {@link #queue()}; see {@link FakeGpuQueue#submit}. */
    public SyncPoint submit(Duration duration) {
        return queue.submit(duration);
    }

    /** Moves the clock forward by {@code duration}, completing on this thread the work that ends meanwhile. */
    public void advance(Duration duration) {
        clock.advanceTimeBy(duration);
    }

    /** The virtual clock. */
    public VirtualTimeScheduler clock() {
        return clock;
    }

    /** Loses the device: every queue's pending and later points fail (see {@link FakeGpuQueue#loseDevice}). */
    public void loseDevice(Throwable cause) {
        for (FakeGpuQueue q : queues) {
            q.loseDevice(cause);
        }
    }

    /** Closes every queue (see {@link FakeGpuQueue#close()}); the clock is the caller's. */
    @Override
    public void close() {
        for (FakeGpuQueue q : queues) {
            q.close();
        }
    }
}
