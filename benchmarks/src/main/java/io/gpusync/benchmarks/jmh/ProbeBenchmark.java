package io.gpusync.benchmarks.jmh;

import io.gpusync.SyncWaiter;
import io.gpusync.benchmarks.subjects.Subject;
import io.gpusync.benchmarks.subjects.Subjects;
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

import java.util.concurrent.TimeUnit;

/**
 * The cost of one probe ({@code waiter.isSignaled()}) per backend, on a pending and on a signalled point —
 * what the PROBE path and gpu-handle-types'/CUDA.jl's spin phases pay per wait per pass.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class ProbeBenchmark {
    /** A subject of {@link Subjects#all()} (add a backend there and name it here or with {@code -p subject=}). */
    @Param({"host-timeline", "eventfd", "vulkan-timeline", "opencl-user-event"})
    public String subject;

    private Subject.Stream stream;
    private SyncWaiter pending;
    private SyncWaiter signalled;

    @Setup(Level.Trial)
    public void setUp() {
        Subject s = Subjects.byName(subject);
        stream = s.newStream();
        Subject.Point done = stream.next();
        done.signal();
        signalled = done.waiter();
        pending = stream.next().waiter();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        stream.signalAll();
        stream.close();
    }

    @Benchmark
    public boolean probePending() {
        return pending.isSignaled();
    }

    @Benchmark
    public boolean probeSignalled() {
        return signalled.isSignaled();
    }
}
