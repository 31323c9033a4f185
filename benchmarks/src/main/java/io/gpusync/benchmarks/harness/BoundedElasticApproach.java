package io.gpusync.benchmarks.harness;

import io.gpusync.SyncWaiter;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Alternative (a): {@code Mono.fromCallable(() -> { point.await(t); return true; }).subscribeOn(boundedElastic)}.
 * A private bounded-elastic scheduler with exactly {@link Schedulers#boundedElastic()}'s sizing, so its
 * threads can be counted and disposed per cell. The only addition is bookkeeping of what a wait holds: a
 * queued task until it starts or is cancelled, a thread until the native wait returns (a cancel interrupts
 * the thread, which a native wait does not notice).
 */
final class BoundedElasticApproach implements Approach {
    private static final String PREFIX = "alt-a-elastic";
    private final Scheduler elastic = Schedulers.newBoundedElastic(Schedulers.DEFAULT_BOUNDED_ELASTIC_SIZE,
            Schedulers.DEFAULT_BOUNDED_ELASTIC_QUEUESIZE, PREFIX, 60, true);
    private final AtomicLong holding = new AtomicLong();

    @Override
    public String key() {
        return "a";
    }

    @Override
    public String label() {
        return "boundedElastic";
    }

    @Override
    public Mono<Void> await(SyncWaiter waiter, Duration timeout) {
        return Mono.defer(() -> {
            Held held = new Held();
            holding.incrementAndGet();
            return Mono.fromCallable(() -> {
                        if (!held.start()) {
                            return true;
                        }
                        try {
                            waiter.await(timeout);
                            return true;
                        } finally {
                            holding.decrementAndGet();
                        }
                    })
                    .subscribeOn(elastic)
                    .doOnCancel(() -> {
                        if (held.cancelBeforeStart()) {
                            holding.decrementAndGet();
                        }
                    })
                    .then();
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
        elastic.dispose();
    }

    private static final class Held extends AtomicInteger {
        boolean start() {
            return compareAndSet(0, 1);
        }

        boolean cancelBeforeStart() {
            return compareAndSet(0, 2);
        }
    }
}
