package io.gpusync.test;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.scheduler.Scheduler;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A fake GPU queue for testing code that waits on GPU work, without a GPU: work is submitted with the time it
 * takes, runs in submission order (each item starts when the one before it ends, as on one CUDA stream or one
 * Vulkan queue), and each submission returns the {@link SyncPoint} that completes when it ends. The points are
 * {@link SyncPoint.HostTimeline}s of one {@link CpuTimeline}, so every gpusync wait path (blocking, callbacks,
 * the reactive engine) treats them as it treats a GPU timeline.
 *
 * <p>Time is the given {@link Scheduler}'s clock: on {@code Schedulers.single()} work takes real time; on a
 * {@link reactor.test.scheduler.VirtualTimeScheduler} it ends only when the test advances the clock (see
 * {@link VirtualGpu}). Failures: {@link #submitFault} is work that loses the device when it ends (it and every
 * later point fail with {@link DeviceLostException}, waits on earlier ones complete first), as a faulting kernel
 * poisons a CUDA context; {@link #loseDevice} loses it at once.
 *
 * <p><b>Threading.</b> Thread-safe: submissions may come from any thread. Points complete on the scheduler's
 * thread (with virtual time, the thread that advances the clock), which also runs every callback registered on
 * them: callbacks must hand over, not block. <b>Blocking.</b> Nothing here blocks; waiting is the caller's
 * business ({@code point.waiter()} or the engine). <b>Cancellation.</b> Cancelling a wait on a point does not
 * cancel the work (a GPU does not either); {@link #close()} cancels the work not yet ended and fails its points
 * with {@link DeviceLostException}.
 */
public final class FakeGpuQueue implements AutoCloseable {
    private final Scheduler clock;
    private final String name;
    private final CpuTimeline timeline = new CpuTimeline();
    private final Disposable.Composite scheduled = Disposables.composite();
    /** Guards {@link #submitted}, {@link #busyUntilNanos} and {@link #closed}. */
    private final Object lock = new Object();
    /** Orders the signals of items that end at once on a scheduler of several threads. */
    private final Object signalLock = new Object();
    private long submitted;
    private long busyUntilNanos = Long.MIN_VALUE;
    private boolean closed;

    private FakeGpuQueue(Scheduler clock, String name) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.name = Objects.requireNonNull(name, "name");
    }

    /** A queue whose work takes time on {@code clock} (real time, or virtual time on a VirtualTimeScheduler). */
    public static FakeGpuQueue on(Scheduler clock) {
        return new FakeGpuQueue(clock, "FakeGpuQueue");
    }

    static FakeGpuQueue named(Scheduler clock, String name) {
        return new FakeGpuQueue(clock, name);
    }

    /**
     * Submits work that takes {@code duration} once the work before it has ended; returns the point that
     * completes when it ends. A zero duration ends with the work before it.
     *
     * @throws IllegalStateException if the queue is closed
     */
    public SyncPoint submit(Duration duration) {
        return enqueue(duration, false);
    }

    /**
     * Submits work that loses the device when it ends: the work before it completes, while this point and every
     * later one fail with {@link DeviceLostException} (its {@code ErrorKind} is {@code FATAL}).
     *
     * @throws IllegalStateException if the queue is closed
     */
    public SyncPoint submitFault(Duration duration) {
        return enqueue(duration, true);
    }

    /**
     * Loses the device now: every pending and later point fails with a {@link DeviceLostException} caused by
     * {@code cause} (or with {@code cause} itself if it is a {@code SyncException}). Irreversible. Waits that
     * completed before stay completed, but probing any point of the queue afterwards fails too, as querying an
     * event of a lost CUDA context does.
     */
    public void loseDevice(Throwable cause) {
        timeline.fail(cause);
    }

    /** How many items were submitted. */
    public long submitted() {
        synchronized (lock) {
            return submitted;
        }
    }

    /** How many items have ended (completed or not, a lost device ends nothing). */
    public long completed() {
        return timeline.value();
    }

    /** The timeline the points are on, for tests that signal or inspect it directly. */
    public CpuTimeline timeline() {
        return timeline;
    }

    /**
     * Cancels the work not yet ended and fails its points, and every later submission's, with a
     * {@link DeviceLostException}. Idempotent.
     */
    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
        }
        scheduled.dispose();
        timeline.fail(new DeviceLostException(BackendKind.CPU, name + " closed with work pending"));
    }

    private SyncPoint enqueue(Duration duration, boolean fault) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException("negative duration: " + duration);
        }
        long value;
        long delayNanos;
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException(name + " is closed");
            }
            long now = clock.now(TimeUnit.NANOSECONDS);
            long start = Math.max(now, busyUntilNanos);
            busyUntilNanos = start + duration.toNanos();
            delayNanos = busyUntilNanos - now;
            value = ++submitted;
        }
        SyncPoint point = timeline.at(value);
        Disposable task = clock.schedule(() -> end(value, fault), delayNanos, TimeUnit.NANOSECONDS);
        scheduled.add(task);
        return point;
    }

    /**
     * Ends item {@code value}. Items due at the same instant may run in any order on a scheduler of several
     * threads; the timeline is only raised, so a late signal of an earlier item completes nothing twice.
     */
    private void end(long value, boolean fault) {
        synchronized (signalLock) {
            long done = fault ? value - 1 : value;
            if (Long.compareUnsigned(timeline.value(), done) < 0) {
                timeline.signal(done);
            }
        }
        if (fault) {
            timeline.fail(new DeviceLostException(BackendKind.CPU, name + ": submission " + value + " faulted"));
        }
    }

    @Override
    public String toString() {
        return name + "[submitted=" + submitted() + ", completed=" + completed() + "]";
    }
}
