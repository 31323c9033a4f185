package io.gpusync.benchmarks.harness;

import io.gpusync.SyncWaiter;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The reference: a new platform thread per wait, blocked in {@code waiter.await(timeout)}, completing the
 * {@code Mono} from that thread. It cannot be cancelled (the thread stays in the wait until it returns).
 */
final class RawThreadApproach implements Approach {
    private static final String PREFIX = "raw-wait-";
    private final AtomicLong holding = new AtomicLong();
    private final AtomicLong count = new AtomicLong();

    @Override
    public String key() {
        return "raw";
    }

    @Override
    public String label() {
        return "raw thread";
    }

    @Override
    public Mono<Void> await(SyncWaiter waiter, Duration timeout) {
        return Mono.create(sink -> {
            holding.incrementAndGet();
            Thread.ofPlatform().daemon(true).name(PREFIX + count.incrementAndGet()).start(() -> {
                try {
                    waiter.await(timeout);
                    sink.success();
                } catch (Throwable e) {
                    sink.error(e);
                } finally {
                    holding.decrementAndGet();
                }
            });
        });
    }

    @Override
    public int threads() {
        return Approach.threadsNamed(PREFIX);
    }

    @Override
    public long holding() {
        return holding.get();
    }

    @Override
    public void close() {
    }
}
