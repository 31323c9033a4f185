package io.gpusync.reactor.tck;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The Reactive Streams TCK ({@link PublisherVerification}, with elements) over an engine's pipeline operators:
 * {@code Flux.range(0, elements)} through the operator, where every third item's point is signalled a
 * millisecond after its item is sent (its wait is pending at first, completed by a timer thread) and the others
 * are already signalled. The failed publisher is the operator over a source that fails: with no demand it
 * requests nothing, so a failed wait cannot be the TCK's "fails without demand" case (the failing waits are
 * {@code AwaitEachTest}'s).
 */
public abstract class PipelinePublisherVerification extends PublisherVerification<Integer> {
    protected final SyncEngine engine;

    protected PipelinePublisherVerification(String name) {
        super(new TestEnvironment(2_000, 300), 2_000);
        this.engine = GpuSync.builder().name("tck-" + name).build();
    }

    /** The operator under test, with this {@code pointOf}. */
    protected abstract Function<Flux<Integer>, Flux<Integer>> operator(Function<Integer, SyncPoint> pointOf);

    private static SyncPoint pointOf(int item) {
        if (item % 3 != 0) {
            return SyncPoint.CPU;
        }
        CpuTimeline timeline = new CpuTimeline();
        Schedulers.parallel().schedule(() -> timeline.signal(1), 1, TimeUnit.MILLISECONDS);
        return timeline.at(1);
    }

    @Override
    public long maxElementsFromPublisher() {
        return 4_096;
    }

    @Override
    public Publisher<Integer> createPublisher(long elements) {
        return Flux.range(0, (int) elements).transform(operator(PipelinePublisherVerification::pointOf));
    }

    @Override
    public Publisher<Integer> createFailedPublisher() {
        return Flux.<Integer>error(new DeviceLostException(BackendKind.CPU, "the source failed"))
                .transform(operator(PipelinePublisherVerification::pointOf));
    }

    @AfterClass
    public void disposeEngine() {
        engine.dispose();
    }
}
