package io.gpusync.examples.device;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncPoint;

import java.util.OptionalLong;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

/**
 * A device whose unit of work is one queue signal: {@link #submit} enqueues it and returns the point it signals. Either
 * the next value of one counter ({@link #onCounter}: a Vulkan timeline semaphore, whose queue signals may be pending
 * together), or whatever the producer hands out (D3D12: {@code D3D12Device.queueSignalPoint()}, which never has two
 * queue Signals pending on one fence, since vkd3d 1.2 can apply them in the wrong order and lose the higher value).
 * Submissions are serialised; {@link #close()} closes the producer.
 */
final class QueueSignalDevice implements Device {
    private final String backend;
    private final String description;
    private final Supplier<SyncPoint> signalNext;
    private final AutoCloseable producer;
    private final SubmissionLog log = new SubmissionLog();
    private boolean closed;

    QueueSignalDevice(String backend, String description, Supplier<SyncPoint> signalNext, AutoCloseable producer) {
        this.backend = backend;
        this.description = description;
        this.signalNext = signalNext;
        this.producer = producer;
    }

    /**
     * Units signal the next value of {@code counter} (its point at 0, which keeps it alive while the device is open) on
     * the queue; {@link #close()} closes that point, then {@code producer}.
     */
    static QueueSignalDevice onCounter(String backend, String description, SyncPoint counter, LongConsumer signalOnQueue,
                                       AutoCloseable producer) {
        long[] value = {0};
        return new QueueSignalDevice(backend, description, () -> {
            long v = ++value[0];
            signalOnQueue.accept(v);
            return counter.withValue(v);
        }, () -> {
            counter.waiter().close();
            producer.close();
        });
    }

    @Override
    public String backend() {
        return backend;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public synchronized SyncPoint submit(Work work) {
        if (closed) {
            throw new SyncCancelledException("the " + backend + " device is closed");
        }
        long now = System.nanoTime();
        SyncPoint point = signalNext.get();
        log.submitted(point, now);
        return point;
    }

    @Override
    public OptionalLong oldestUnfinishedSubmission() {
        return log.oldestUnfinished();
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            try {
                producer.close();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
