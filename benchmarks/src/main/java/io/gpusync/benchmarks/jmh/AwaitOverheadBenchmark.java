package io.gpusync.benchmarks.jmh;

import io.gpusync.SyncWaiter;
import io.gpusync.benchmarks.subjects.Subject;
import io.gpusync.benchmarks.subjects.Subjects;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Per-wait overhead of {@code GpuSync.await} over the raw native wait, per backend, single-threaded:
 * <ul>
 *   <li>{@code *Signalled}: the point is signalled before the wait — raw {@code waiter.await(t)} vs
 *       subscribing to {@code engine.await(waiter, t)} until {@code onComplete} (the engine's probe-first fast
 *       path; the CALLBACK path registers the driver callback instead, which completes through the engine's
 *       event loop);</li>
 *   <li>{@code *SignalRoundTrip}: a wait registered, then signalled, then observed complete. Raw: signal,
 *       then {@code waiter.await(t)} (returns at once); gpusync: subscribe (registers on its path), signal,
 *       spin until {@code onComplete} — for a host timeline the callback completes inside {@code signal()},
 *       for an eventfd the completion crosses the engine's epoll loop thread. The difference is the engine's
 *       per-wait cost: registration, deregistration, completion and (eventfd) the loop hop.</li>
 * </ul>
 * The engine is a default-built one with a 1 s timeout per wait (so every wait also schedules and cancels
 * its timer, as in real use).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class AwaitOverheadBenchmark {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    @Param({"host-timeline", "eventfd", "vulkan-timeline", "opencl-user-event"})
    public String subject;

    private SyncEngine engine;
    private Subject.Stream stream;
    private Subject.Point signalledPoint;
    private Subject.Point reusable;
    private boolean reusableResets;
    private final Done done = new Done();

    @Setup(Level.Trial)
    public void setUp() {
        engine = GpuSync.builder().name("jmh").build();
        stream = Subjects.byName(subject).newStream();
        signalledPoint = stream.next();
        signalledPoint.presignal();
        reusable = stream.next();
        reusableResets = subject.equals(Subjects.EVENTFD);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        stream.signalAll();
        engine.dispose();
        stream.close();
    }

    @Benchmark
    public void rawAwaitSignalled() {
        signalledPoint.waiter().await(TIMEOUT);
    }

    @Benchmark
    public boolean gpusyncAwaitSignalled() {
        done.completed = false;
        engine.await(signalledPoint.waiter(), TIMEOUT).subscribe(done);
        while (!done.completed) {
            Thread.onSpinWait(); // paths that hand the completion to an engine thread (driver callbacks) finish later
        }
        return true;
    }

    @Benchmark
    public void rawSignalRoundTrip() {
        Subject.Point p = nextPoint();
        p.signal();
        p.waiter().await(TIMEOUT);
        p.reset();
    }

    @Benchmark
    public void gpusyncSignalRoundTrip() {
        Subject.Point p = nextPoint();
        SyncWaiter w = p.waiter();
        done.completed = false;
        engine.await(w, TIMEOUT).subscribe(done);
        p.signal();
        while (!done.completed) {
            Thread.onSpinWait();
        }
        p.reset();
    }

    private Subject.Point nextPoint() {
        return reusableResets ? reusable : stream.next();
    }

    /** A reusable subscriber: sets a flag on completion. */
    static final class Done implements CoreSubscriber<Void> {
        volatile boolean completed;

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Void unused) {
        }

        @Override
        public void onError(Throwable t) {
            throw new IllegalStateException("wait failed", t);
        }

        @Override
        public void onComplete() {
            completed = true;
        }
    }
}
