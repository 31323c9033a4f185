package io.gpusync.cuda;

import static io.gpusync.cuda.CudaTestSupport.assumeCuda;
import static io.gpusync.cuda.CudaTestSupport.check;
import static io.gpusync.cuda.CudaTestSupport.createContext;
import static io.gpusync.cuda.CudaTestSupport.current;
import static io.gpusync.cuda.CudaTestSupport.launch;
import static io.gpusync.cuda.CudaTestSupport.pop;
import static io.gpusync.cuda.CudaTestSupport.push;
import static io.gpusync.cuda.CudaTestSupport.stream;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A context destroyed under gpusync's points (a user's {@code cuCtxDestroy}): their waits end as
 * {@link DeviceLostException} (FATAL: nothing in that context can complete), not as a configuration error or a
 * timeout, the timeline remembers it for every later advance and wait, and releasing the points afterwards makes
 * no call on handles that died with the context and leaves the releasing thread's context stack as it was.
 */
@Tag("gpu")
class CudaDestroyedContextGpuTest {
    private static final long MS = 1_000_000L;

    @Test
    void aTimelineWhoseContextIsDestroyedFailsItsPendingWaitAndEveryLaterAdvanceWithDeviceLost() throws Exception {
        assumeCuda();
        MemorySegment ctx = createContext();
        CudaHostTimeline timeline = CudaHostTimeline.create(ctx);
        push(ctx);
        MemorySegment s = stream();
        launch("spin_ns", s, 300 * MS);
        SyncPoint.Cuda pending = timeline.advance(s);
        pop();
        check(Cuda.cuCtxDestroy_v2(ctx), "cuCtxDestroy_v2"); // the write of the value dies with the context

        long t0 = System.nanoTime();
        assertThatThrownBy(() -> pending.await(Duration.ofSeconds(10)))
                .isInstanceOfSatisfying(DeviceLostException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.FATAL));
        assertThat((System.nanoTime() - t0) / MS).as("ms until the wait failed (not its 10 s timeout)").isLessThan(2_000);
        assertThatThrownBy(() -> timeline.advance(MemorySegment.NULL))
                .as("the failure is remembered").isInstanceOf(DeviceLostException.class);
        assertThatThrownBy(pending::isSignaled).isInstanceOf(DeviceLostException.class);

        assertThat(current().address()).isZero();
        pending.waiter().close();
        timeline.close(); // its mark events died with the context: the failed push skips their destroy
        assertThat(current().address()).as("the release left the context stack as it was").isZero();
    }

    @Test
    void anEventWhoseContextWasDestroyedIsReleasedWithoutTouchingItFromAnyThread() throws Exception {
        assumeCuda();
        MemorySegment ctx = createContext();
        SyncPoint.CudaEvent event = CudaEvents.record(MemorySegment.NULL, ctx);
        event.await(Duration.ofSeconds(10));
        CudaEventSyncWaiter waiter = (CudaEventSyncWaiter) event.waiter();
        check(Cuda.cuCtxDestroy_v2(ctx), "cuCtxDestroy_v2");

        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread bare = Thread.ofPlatform().start(() -> {
            try {
                waiter.close(); // owned: push fails (the context is gone) → no cuEventDestroy on a dead handle
                assertThat(current().address()).isZero();
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        bare.join();
        assertThat(failure.get()).isNull();
        long until = System.nanoTime() + 2_000 * MS;
        while (!waiter.released() && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertThat(waiter.released()).as("released (its handle forgotten) even though nothing could be destroyed").isTrue();
    }
}
