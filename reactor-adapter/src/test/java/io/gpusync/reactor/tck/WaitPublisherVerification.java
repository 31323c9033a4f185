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
import java.util.concurrent.TimeUnit;

/**
 * The Reactive Streams TCK ({@link PublisherVerification}) over an engine's {@code Mono<Void>} waits: a
 * {@code Mono<Void>} emits no element, so {@link #maxElementsFromPublisher()} is 0 and the TCK checks the
 * rules of subscription, termination without demand, failure and cancellation. Each subclass says how a
 * wait that completes (shortly after it is created) and a wait that fails are made.
 */
public abstract class WaitPublisherVerification extends PublisherVerification<Void> {
    protected final SyncEngine engine;

    protected WaitPublisherVerification(String name) {
        super(new TestEnvironment(2_000, 300), 2_000);
        this.engine = GpuSync.builder().name("tck-" + name).build();
    }

    /** A point that is signalled a few milliseconds from now (so waits on it are pending at first). */
    protected static SyncPoint soonSignalled() {
        CpuTimeline timeline = new CpuTimeline();
        Schedulers.parallel().schedule(() -> timeline.signal(1), 5, TimeUnit.MILLISECONDS);
        return timeline.at(1);
    }

    /** A point whose timeline has failed (a lost device). */
    protected static SyncPoint failed() {
        CpuTimeline timeline = new CpuTimeline();
        timeline.fail(new DeviceLostException(BackendKind.CPU, "lost"));
        return timeline.at(1);
    }

    /** A timeout short enough for the TCK's waits. */
    protected static final Duration SHORT = Duration.ofMillis(20);

    @Override
    public long maxElementsFromPublisher() {
        return 0; // Mono<Void>
    }

    @Override
    public abstract Publisher<Void> createPublisher(long elements);

    @AfterClass
    public void disposeEngine() {
        engine.dispose();
    }
}
