package io.gpusync.reactor.tck;

import io.gpusync.cpu.CpuTimeline;
import org.reactivestreams.Publisher;

import java.time.Duration;
import java.util.List;

/** The TCK over {@code SyncEngine.awaitAny}: its member waits start at subscription, without demand. */
public class AwaitAnyTckTest extends WaitPublisherVerification {
    public AwaitAnyTckTest() {
        super("await-any");
    }

    @Override
    public Publisher<Void> createPublisher(long elements) {
        return engine.awaitAny(List.of(new CpuTimeline().at(1), soonSignalled()), Duration.ofSeconds(5));
    }

    @Override
    public Publisher<Void> createFailedPublisher() {
        return engine.awaitAny(List.of(new CpuTimeline().at(1), failed()), SHORT);
    }
}
