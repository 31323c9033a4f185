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
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The TCK over {@code SyncEngine.awaitFirst}: one element (the winning point), held until requested; its waits
 * start at subscription, so the failed publisher (every point failed) fails without demand.
 */
public class AwaitFirstTckTest extends PublisherVerification<SyncPoint> {
    private final SyncEngine engine = GpuSync.builder().name("tck-await-first").build();

    public AwaitFirstTckTest() {
        super(new TestEnvironment(2_000, 300), 2_000);
    }

    @Override
    public long maxElementsFromPublisher() {
        return 1;
    }

    @Override
    public Publisher<SyncPoint> createPublisher(long elements) {
        CpuTimeline timeline = new CpuTimeline();
        Schedulers.parallel().schedule(() -> timeline.signal(1), 5, TimeUnit.MILLISECONDS);
        return engine.awaitFirst(List.of(new CpuTimeline().at(1), timeline.at(1)), Duration.ofSeconds(5));
    }

    @Override
    public Publisher<SyncPoint> createFailedPublisher() {
        CpuTimeline timeline = new CpuTimeline();
        timeline.fail(new DeviceLostException(BackendKind.CPU, "lost"));
        return engine.awaitFirst(List.of(timeline.at(1), timeline.at(2)), Duration.ofMillis(20));
    }

    @AfterClass
    public void disposeEngine() {
        engine.dispose();
    }
}
