package io.gpusync.benchmarks.jmh;

import io.gpusync.cpu.CpuTimeline;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
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

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the {@code gpusync.wait} observations cost a wait (issue 30): one wait on a {@link CpuTimeline} point,
 * subscribed, then signalled, then seen complete ({@code onComplete} runs inside {@code signal()}: the CALLBACK
 * path), in sample mode for the wake p50. The engine is built with
 * <ul>
 *   <li>{@code none}: no observation registry (the path every engine took before; must cost nothing);</li>
 *   <li>{@code no-handlers}: a registry without handlers (Micrometer's "noop" registry: one check per wait);</li>
 *   <li>{@code noop-handler}: a registry with a handler that does nothing (the observation and its context are
 *       made, started and stopped);</li>
 *   <li>{@code counting-handler}: a handler that counts starts and stops (a simple real handler);</li>
 *   <li>{@code meter-handler}: Micrometer's {@code DefaultMeterObservationHandler} on a
 *       {@code SimpleMeterRegistry} (a timer and a long task timer per wait, what Spring Boot wires with metrics
 *       on).</li>
 * </ul>
 * Each wait also schedules and cancels its 1 s timeout, as in real use. Run with {@code -prof gc} for the bytes
 * allocated per wait.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class ObservationOverheadBenchmark {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    @Param({"none", "no-handlers", "noop-handler", "counting-handler", "meter-handler"})
    public String registry;

    private SyncEngine engine;
    private CpuTimeline timeline;
    private long value;
    private final AwaitOverheadBenchmark.Done done = new AwaitOverheadBenchmark.Done();

    @Setup(Level.Trial)
    public void setUp() {
        SyncEngine.Builder builder = GpuSync.builder().name("jmh");
        ObservationRegistry observations = ObservationRegistry.create();
        switch (registry) {
            case "none" -> observations = null;
            case "no-handlers" -> { }
            case "noop-handler" -> observations.observationConfig().observationHandler(new NoopHandler());
            case "counting-handler" -> observations.observationConfig().observationHandler(new CountingHandler());
            case "meter-handler" -> observations.observationConfig()
                    .observationHandler(new DefaultMeterObservationHandler(new SimpleMeterRegistry()));
            default -> throw new IllegalArgumentException("registry: " + registry);
        }
        if (observations != null) {
            builder.observationRegistry(observations);
        }
        engine = builder.build();
        timeline = new CpuTimeline();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        engine.dispose();
    }

    @Benchmark
    public void signalRoundTrip() {
        long v = ++value;
        done.completed = false;
        engine.await(timeline.at(v), TIMEOUT).subscribe(done);
        timeline.signal(v);
        while (!done.completed) {
            Thread.onSpinWait();
        }
    }

    /** Supports every context and does nothing. */
    static final class NoopHandler implements ObservationHandler<Observation.Context> {
        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }

    /** Counts starts and stops. */
    static final class CountingHandler implements ObservationHandler<Observation.Context> {
        final LongAdder started = new LongAdder();
        final LongAdder stopped = new LongAdder();

        @Override
        public void onStart(Observation.Context context) {
            started.increment();
        }

        @Override
        public void onStop(Observation.Context context) {
            stopped.increment();
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }
}
