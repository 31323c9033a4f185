package io.gpusync.examples.device;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncPoint;

import java.util.OptionalLong;
import java.util.function.LongConsumer;

/**
 * A device whose unit of work is one queue signal of the next value of a single counter (a Vulkan timeline semaphore,
 * a D3D12 fence): {@link #submit} signals value {@code n} on the queue and returns the counter's point at {@code n}.
 * Submissions are serialised; {@link #close()} releases the counter's point, then the producer.
 */
final class SignalledCounterDevice implements Device {
    private final String backend;
    private final String description;
    private final SyncPoint counter; // value 0; keeps the counter alive while the device is open
    private final LongConsumer signalOnQueue;
    private final AutoCloseable producer;
    private final SubmissionLog log = new SubmissionLog();
    private long value;
    private boolean closed;

    SignalledCounterDevice(String backend, String description, SyncPoint counter, LongConsumer signalOnQueue,
                           AutoCloseable producer) {
        this.backend = backend;
        this.description = description;
        this.counter = counter;
        this.signalOnQueue = signalOnQueue;
        this.producer = producer;
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
        long v = ++value;
        long now = System.nanoTime();
        signalOnQueue.accept(v);
        SyncPoint point = counter.withValue(v);
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
            counter.waiter().close();
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
