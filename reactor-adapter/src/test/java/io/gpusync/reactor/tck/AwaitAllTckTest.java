package io.gpusync.reactor.tck;

import io.gpusync.cpu.CpuTimeline;
import org.reactivestreams.Publisher;

import java.time.Duration;
import java.util.List;

/** The TCK over {@code SyncEngine.awaitAll}: its member waits start at subscription, without demand. */
public class AwaitAllTckTest extends WaitPublisherVerification {
    public AwaitAllTckTest() {
        super("await-all");
    }

    @Override
    public Publisher<Void> createPublisher(long elements) {
        return engine.awaitAll(List.of(soonSignalled(), soonSignalled()), Duration.ofSeconds(5));
    }

    @Override
    public Publisher<Void> createFailedPublisher() {
        return engine.awaitAll(List.of(new CpuTimeline().at(1), failed()), SHORT);
    }
}
