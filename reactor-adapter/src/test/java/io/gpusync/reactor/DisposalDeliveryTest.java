package io.gpusync.reactor;

import io.gpusync.SyncCancelledException;
import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.subscriber.TestSubscriber;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Disposing an engine ends each pending wait once, and each operator signals its subscriber once: never while the
 * subscriber is still in {@code onSubscribe}, and without sending the sibling waits' cancellations to
 * {@code onErrorDropped} when several waits of one operator end in the same dispose.
 */
class DisposalDeliveryTest {
    private static final Duration LONG = Duration.ofSeconds(30);

    @Test
    void aDisposeOnAnotherThreadNeverSignalsASubscriberThatIsStillInOnSubscribe() throws Exception {
        SyncEngine engine = GpuSync.builder().name("dispose-in-on-subscribe").build();
        SyncPoint never = new CpuTimeline().at(1);
        List<String> signals = new CopyOnWriteArrayList<>();
        engine.await(never, LONG).subscribe(new CoreSubscriber<>() {
            volatile boolean inOnSubscribe;

            @Override
            public void onSubscribe(Subscription s) {
                inOnSubscribe = true;
                Thread disposer = Thread.ofPlatform().start(engine::dispose);
                try {
                    disposer.join(); // the engine is disposed before this subscriber has its subscription in hand
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                signals.add("onSubscribe");
                inOnSubscribe = false;
            }

            @Override
            public void onNext(Void v) {
                signals.add("onNext");
            }

            @Override
            public void onError(Throwable t) {
                signals.add((inOnSubscribe ? "onError during onSubscribe: " : "onError: ") + t.getClass().getSimpleName());
            }

            @Override
            public void onComplete() {
                signals.add("onComplete");
            }
        });
        assertThat(signals).containsExactly("onSubscribe", "onError: SyncCancelledException");
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void anAwaitEachWhoseWaitsAllEndInOneDisposeFailsOnceAndDropsNothing() {
        Deliveries deliveries = new Deliveries();
        SyncEngine engine = GpuSync.builder().name("dispose-await-each").deliverOn(deliveries.scheduler).build();
        CpuTimeline timeline = new CpuTimeline();
        List<SyncPoint> points = List.of(timeline.at(1), timeline.at(2), timeline.at(3));
        TestSubscriber<Integer> out = TestSubscriber.create();
        try (DroppedErrors dropped = new DroppedErrors()) {
            Flux.range(0, 3).transform(engine.awaitEach(points::get, 3, LONG)).subscribe(out);
            assertThat(engine.pendingWaits()).isEqualTo(3);
            engine.dispose(); // every wait ends with the engine: three outcomes queued for delivery
            deliveries.runAll();
            assertThat(out.expectTerminalError()).isInstanceOf(SyncCancelledException.class)
                    .hasMessageContaining("awaitEach: item");
            assertThat(out.getProtocolErrors()).isEmpty();
            assertThat(dropped.dropped).as("the siblings' cancellations say nothing new").isEmpty();
        }
    }

    @Test
    void anAwaitAllWhoseMembersAllEndInOneDisposeFailsOnceAndDropsNothing() {
        Deliveries deliveries = new Deliveries();
        SyncEngine engine = GpuSync.builder().name("dispose-await-all").deliverOn(deliveries.scheduler).build();
        CpuTimeline timeline = new CpuTimeline();
        TestSubscriber<Void> out = TestSubscriber.create();
        try (DroppedErrors dropped = new DroppedErrors()) {
            engine.awaitAll(List.of(timeline.at(1), timeline.at(2)), LONG).subscribe(out);
            engine.dispose();
            deliveries.runAll();
            assertThat(out.expectTerminalError()).isInstanceOf(SyncCancelledException.class);
            assertThat(out.getProtocolErrors()).isEmpty();
            assertThat(dropped.dropped).isEmpty();
        }
    }

    /** A {@code deliverOn} scheduler whose tasks wait until the test runs them. */
    private static final class Deliveries {
        final ConcurrentLinkedQueue<Runnable> queued = new ConcurrentLinkedQueue<>();
        final Scheduler scheduler = Schedulers.fromExecutor(queued::add);

        void runAll() {
            for (Runnable r; (r = queued.poll()) != null; ) {
                r.run();
            }
        }
    }
}
