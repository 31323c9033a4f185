package io.gpusync.reactor.tck;

import io.gpusync.cpu.CpuTimeline;
import org.reactivestreams.Publisher;

import java.time.Duration;

/** The TCK over {@code SyncEngine.await}: completes when signalled, fails on a failed point or a timeout. */
public class AwaitTckTest extends WaitPublisherVerification {
    public AwaitTckTest() {
        super("await");
    }

    @Override
    public Publisher<Void> createPublisher(long elements) {
        return engine.await(soonSignalled(), Duration.ofSeconds(5));
    }

    @Override
    public Publisher<Void> createFailedPublisher() {
        return engine.await(new CpuTimeline().at(1), SHORT); // times out without demand
    }
}
