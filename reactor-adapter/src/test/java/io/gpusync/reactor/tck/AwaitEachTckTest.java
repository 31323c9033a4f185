package io.gpusync.reactor.tck;

import io.gpusync.SyncPoint;
import reactor.core.publisher.Flux;

import java.time.Duration;
import java.util.function.Function;

/** The TCK over {@code SyncEngine.awaitEach} (source order), 16 items in flight at most. */
public class AwaitEachTckTest extends PipelinePublisherVerification {
    public AwaitEachTckTest() {
        super("await-each");
    }

    @Override
    protected Function<Flux<Integer>, Flux<Integer>> operator(Function<Integer, SyncPoint> pointOf) {
        return engine.awaitEach(pointOf, 16, Duration.ofSeconds(5));
    }
}
