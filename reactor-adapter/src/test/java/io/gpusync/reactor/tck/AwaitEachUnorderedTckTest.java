package io.gpusync.reactor.tck;

import io.gpusync.SyncPoint;
import reactor.core.publisher.Flux;

import java.time.Duration;
import java.util.function.Function;

/** The TCK over {@code SyncEngine.awaitEachUnordered} (completion order), 16 items in flight at most. */
public class AwaitEachUnorderedTckTest extends PipelinePublisherVerification {
    public AwaitEachUnorderedTckTest() {
        super("await-each-unordered");
    }

    @Override
    protected Function<Flux<Integer>, Flux<Integer>> operator(Function<Integer, SyncPoint> pointOf) {
        return engine.awaitEachUnordered(pointOf, 16, Duration.ofSeconds(5));
    }
}
