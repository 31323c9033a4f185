package io.gpusync.examples.device;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A GPU stand-in that runs anywhere: {@code queues} in-order queues, each a {@link CpuTimeline}. A
 * submission gets the next value of a queue (round robin) and "runs" after the work already queued there,
 * for a duration drawn from the {@link KernelModel} (or the work's own); one device thread — the "GPU" —
 * signals each queue's timeline as its kernels finish, in submission order, like a GPU queue signalling a
 * timeline semaphore. No thread waits for any particular submission: the points are host timeline points,
 * which gpusync completes by callback (path {@code CALLBACK}).
 *
 * <p>Timing is that of a {@link ScheduledThreadPoolExecutor} (timer slack ≈ 50 µs on Linux), so very short
 * kernels finish a little late — as a real driver's interrupt-driven completions do.
 */
public final class SimulatedDevice implements Device {
    private final KernelModel model;
    private final Queue[] queues;
    private final ScheduledThreadPoolExecutor gpu;
    private final AtomicLong next = new AtomicLong();
    private volatile boolean closed;

    /** A device with {@code queues} in-order queues whose kernels follow {@code model}. */
    public SimulatedDevice(KernelModel model, int queues) {
        if (queues < 1) {
            throw new IllegalArgumentException("queues must be ≥ 1: " + queues);
        }
        this.model = model;
        this.queues = new Queue[queues];
        for (int i = 0; i < queues; i++) {
            this.queues[i] = new Queue();
        }
        this.gpu = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "gpusync-demo-simulated-gpu");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public String backend() {
        return "cpu";
    }

    @Override
    public String description() {
        return "simulated GPU on the CPU timeline: " + queues.length + " in-order queue"
                + (queues.length == 1 ? "" : "s") + ", " + model;
    }

    /** The kernel model. */
    public KernelModel model() {
        return model;
    }

    @Override
    public SyncPoint submit(Work work) {
        if (closed) {
            throw new SyncCancelledException("the simulated device is closed");
        }
        long nanos = work.duration().map(Duration::toNanos).orElseGet(() -> model.sampleNanos(ThreadLocalRandom.current()));
        Queue q = queues[(int) Long.remainderUnsigned(next.getAndIncrement(), queues.length)];
        long value;
        synchronized (q) {
            long now = System.nanoTime();
            long start = q.busyUntil - now > 0 ? q.busyUntil : now; // in order: after what is already queued
            q.busyUntil = start + nanos;
            value = ++q.submitted;
            long v = value;
            gpu.schedule(() -> q.finish(v), q.busyUntil - now, TimeUnit.NANOSECONDS);
            SyncPoint point = q.timeline.at(value);
            q.log.submitted(point, now);
            return point;
        }
    }

    @Override
    public OptionalLong oldestUnfinishedSubmission() {
        OptionalLong oldest = OptionalLong.empty();
        for (Queue q : queues) {
            oldest = SubmissionLog.earlier(oldest, q.log.oldestUnfinished());
        }
        return oldest;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        gpu.shutdownNow();
        for (Queue q : queues) {
            q.timeline.fail(new SyncCancelledException("the simulated device was closed"));
        }
    }

    @Override
    public String toString() {
        return "SimulatedDevice[" + description() + "]";
    }

    /** One in-order queue: a timeline and the time its last queued kernel ends. */
    private static final class Queue {
        final CpuTimeline timeline = new CpuTimeline();
        final SubmissionLog log = new SubmissionLog();
        long submitted;
        long busyUntil = System.nanoTime();

        /**
         * Runs on the device thread only. Kernels finish in submission order; if the executor runs two
         * nearly-due tasks out of order, the later value has already signalled the earlier one (a timeline
         * signal completes every wait at or below it) and the earlier task does nothing.
         */
        void finish(long value) {
            if (Long.compareUnsigned(value, timeline.value()) > 0) {
                try {
                    timeline.signal(value);
                } catch (RuntimeException closedMeanwhile) {
                    // the timeline failed in close(): its waits already failed
                }
            }
        }
    }
}
