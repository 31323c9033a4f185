package io.gpusync.reactor;

import io.gpusync.ErrorKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * The one rule for bad arguments (GpuSync's Javadoc): null → {@link NullPointerException} at assembly, as in
 * Reactor; a bad value → the {@code Mono} fails through {@code onError} with
 * {@link SyncInvalidArgumentException}, lazily, at each subscription — for the default engine and a built one.
 */
class InvalidArgumentsTest {
    private static final Duration NEGATIVE = Duration.ofMillis(-1);
    private final SyncEngine engine = GpuSync.builder().name("arguments").build();
    private final CpuTimeline timeline = new CpuTimeline();

    @AfterEach
    void dispose() {
        engine.dispose();
    }

    @Test
    void nullArgumentsThrowNullPointerExceptionAtAssembly() {
        SyncPoint point = timeline.at(1);
        Duration timeout = Duration.ofSeconds(1);
        assertThatNullPointerException().isThrownBy(() -> GpuSync.await((SyncPoint) null)).withMessageContaining("point");
        assertThatNullPointerException().isThrownBy(() -> GpuSync.await((SyncPoint) null, timeout));
        assertThatNullPointerException().isThrownBy(() -> GpuSync.await(point, null)).withMessageContaining("timeout");
        assertThatNullPointerException().isThrownBy(() -> GpuSync.await((SyncWaiter) null, timeout))
                .withMessageContaining("waiter");
        assertThatNullPointerException().isThrownBy(() -> engine.await(point.waiter(), null));
        for (Op op : Op.values()) {
            assertThatNullPointerException().as(op.name()).isThrownBy(() -> op.call(engine, null, timeout))
                    .withMessageContaining("points");
            assertThatNullPointerException().as(op.name()).isThrownBy(() -> op.call(engine, List.of(point), null))
                    .withMessageContaining("timeout");
            List<SyncPoint> withNull = new ArrayList<>(Arrays.asList(point, null));
            assertThatNullPointerException().as(op.name()).isThrownBy(() -> op.call(engine, withNull, timeout))
                    .withMessageContaining("element 1");
            // null wins over a bad value: still thrown at assembly
            assertThatNullPointerException().as(op.name()).isThrownBy(() -> op.call(engine, withNull, NEGATIVE));
        }
        assertThat(timeline.pendingWaits()).isZero();
    }

    @Test
    void aNegativeTimeoutFailsEachSubscriptionThroughOnErrorAndNeverAtAssembly() {
        List<Mono<Void>> monos = new ArrayList<>(List.of(
                GpuSync.await(timeline.at(1), NEGATIVE),
                GpuSync.await(timeline.at(1).waiter(), NEGATIVE),
                engine.await(timeline.at(1), NEGATIVE)));
        for (Op op : Op.values()) {
            monos.add(op.call(engine, List.of(timeline.at(1), timeline.at(2)), NEGATIVE));
            monos.add(op.call(engine, List.of(), NEGATIVE));
            monos.add(op.defaultEngine(List.of(timeline.at(1)), NEGATIVE));
        }
        for (Mono<Void> mono : monos) {
            AtomicReference<Throwable> first = new AtomicReference<>();
            StepVerifier.create(mono)
                    .consumeErrorWith(e -> {
                        first.set(e);
                        assertThat(e).isInstanceOf(SyncInvalidArgumentException.class)
                                .hasMessageContaining("timeout must not be negative");
                        assertThat(((SyncInvalidArgumentException) e).kind()).isEqualTo(ErrorKind.CONFIGURATION);
                    })
                    .verify(Duration.ofSeconds(5));
            // lazy: every subscription gets its own error
            StepVerifier.create(mono).consumeErrorWith(e -> assertThat(e).isInstanceOf(SyncInvalidArgumentException.class)
                    .isNotSameAs(first.get())).verify(Duration.ofSeconds(5));
        }
        assertThat(timeline.pendingWaits()).isZero();
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void anEmptyAwaitAnyFailsThroughOnErrorWhileAnEmptyAwaitAllCompletes() {
        Mono<Void> any = engine.awaitAny(List.of(), Duration.ofSeconds(1)); // no throw
        StepVerifier.create(any).expectErrorSatisfies(e -> assertThat(e).isInstanceOf(SyncInvalidArgumentException.class)
                .hasMessageContaining("at least one point")).verify(Duration.ofSeconds(5));
        StepVerifier.create(engine.awaitAll(List.of(), Duration.ofSeconds(1))).verifyComplete();
    }

    @Test
    void aZeroTimeoutIsAValidProbeNotABadValue() {
        StepVerifier.create(engine.await(timeline.at(1), Duration.ZERO))
                .expectError(io.gpusync.SyncTimeoutException.class).verify(Duration.ofSeconds(5));
    }

    private enum Op {
        AWAIT_ALL, AWAIT_ANY;

        Mono<Void> call(SyncEngine engine, List<SyncPoint> points, Duration timeout) {
            return this == AWAIT_ALL ? engine.awaitAll(points, timeout) : engine.awaitAny(points, timeout);
        }

        Mono<Void> defaultEngine(List<SyncPoint> points, Duration timeout) {
            return this == AWAIT_ALL ? GpuSync.awaitAll(points, timeout) : GpuSync.awaitAny(points, timeout);
        }
    }
}
