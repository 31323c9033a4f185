package io.gpusync.benchmarks.jmh;

import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Items per second through {@code awaitEach} / {@code awaitEachUnordered} at {@code maxInFlight} = 1,024 over the
 * host timeline ({@code CpuTimeline}), single-threaded. Each invocation runs one pipeline of {@value #ITEMS}
 * items: item {@code i} is "submitted" upstream (its point is {@code queue.at(i)}, a fresh point and waiter, so a
 * real pending wait on the callback path, with its timeout timer), and the "GPU" finishes work {@value #LAG}
 * submissions behind — every 64th submission signals {@code i − LAG}, completing 64 waits at once on the
 * submitting thread, as a queue's completion would; the source's end signals the rest. So about 512–576 waits
 * are in flight throughout, each registered, signalled, drained and emitted. Score: items/s.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Benchmark)
public class AwaitEachBenchmark {
    static final int ITEMS = 100_000;
    static final int LAG = 512;

    @Param({"1024"})
    public int maxInFlight;

    /** Each wait's timeout: {@code 10s} (a timer per wait, as in real use) or {@code forever} (no timer). */
    @Param({"10s", "forever"})
    public String timeout;

    private SyncEngine engine;
    private Duration waitTimeout;

    @Setup(Level.Trial)
    public void setUp() {
        engine = GpuSync.builder().name("jmh-await-each").build();
        waitTimeout = timeout.equals("forever") ? SyncPoint.FOREVER : Duration.ofSeconds(10);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        engine.dispose();
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public long ordered() {
        return run(true);
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public long unordered() {
        return run(false);
    }

    private long run(boolean ordered) {
        CpuTimeline queue = new CpuTimeline();
        Flux<Integer> submissions = Flux.range(1, ITEMS)
                .doOnNext(i -> {
                    if ((i & 63) == 0 && i > LAG) {
                        queue.signal(i - LAG);
                    }
                })
                .concatWith(Mono.fromRunnable(() -> queue.signal(ITEMS)));
        Counter out = new Counter();
        submissions.transform(ordered
                        ? engine.awaitEach((Integer i) -> queue.at(i), maxInFlight, waitTimeout)
                        : engine.awaitEachUnordered((Integer i) -> queue.at(i), maxInFlight, waitTimeout))
                .subscribe(out);
        if (!out.complete || out.count != ITEMS) {
            throw new IllegalStateException("pipeline ended with " + out.count + " items, complete=" + out.complete,
                    out.error);
        }
        return out.sum;
    }

    /** Requests everything, counts (everything here runs on the benchmark thread). */
    static final class Counter implements CoreSubscriber<Integer> {
        long count;
        long sum;
        boolean complete;
        Throwable error;

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Integer i) {
            count++;
            sum += i;
        }

        @Override
        public void onError(Throwable t) {
            error = t;
        }

        @Override
        public void onComplete() {
            complete = true;
        }
    }
}
