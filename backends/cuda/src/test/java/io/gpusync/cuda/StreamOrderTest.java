package io.gpusync.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncCancelledException;
import io.gpusync.SyncException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How {@link StreamOrder} serves the waited-on events of one owned stream, without a GPU and against a service of
 * each test's own: a member's event is a flag the test sets, completing a stream's events in order as CUDA would;
 * a cover's stream callback runs when the test says so ({@link StreamCallbackBudget#streamCallbackRan} then the
 * registration fires, as the driver does). That a real stream's callbacks and probes behave so is
 * {@code StreamOrderGpuTest}'s.
 */
class StreamOrderTest {
    private static final MemorySegment CONTEXT = MemorySegment.ofAddress(0x5eed_0000L);
    private final CudaDriverService cuda = new CudaDriverService(4);
    private final List<Event> all = new ArrayList<>();

    /** One recorded event of a stream and its waiters. */
    private final class Event implements StreamOrder.Member {
        final long seq;
        volatile boolean done;
        volatile boolean wanted = true;
        volatile SyncException probeError;
        volatile long armedKey;
        final AtomicInteger probes = new AtomicInteger();
        /** Probes made while nothing held the event (it could have been destroyed meanwhile). */
        final AtomicInteger probesUnheld = new AtomicInteger();
        /** Stream callbacks armed behind the event while nothing held it. */
        final AtomicInteger armsUnheld = new AtomicInteger();
        /** Runs as the cover is armed behind the event, before the driver call: another thread's doing at that instant. */
        volatile Runnable meanwhile;
        /** The point was closed: holds already taken keep the event, a new one is refused. */
        volatile boolean refuseHolds;
        final AtomicInteger holds = new AtomicInteger();
        final AtomicInteger completions = new AtomicInteger();
        volatile Thread completedOn;
        volatile SyncException failure;

        Event(StreamOrder order) {
            this.seq = order.nextSeq();
            all.add(this);
        }

        @Override
        public long seq() {
            return seq;
        }

        @Override
        public boolean complete() {
            probes.incrementAndGet();
            if (holds.get() <= 0) {
                probesUnheld.incrementAndGet();
            }
            if (probeError != null) {
                throw probeError;
            }
            return done;
        }

        @Override
        public void completed() {
            completedOn = Thread.currentThread();
            completions.incrementAndGet();
        }

        @Override
        public void failed(SyncException error) {
            failure = error;
        }

        @Override
        public boolean wanted() {
            return wanted;
        }

        @Override
        public void dropped() {
        }

        @Override
        public void hold() {
            if (refuseHolds) {
                throw new IllegalStateException("closed"); // as a claim closed by the user: no new hold
            }
            holds.incrementAndGet();
        }

        @Override
        public void leave() {
            holds.decrementAndGet();
        }

        @Override
        public void armBehind(long key) {
            Runnable r = meanwhile;
            if (r != null) {
                r.run();
            }
            if (holds.get() <= 0) {
                armsUnheld.incrementAndGet();
            }
            armedKey = key;
        }

        /** The cover armed behind this event runs, as the driver would run it. */
        void coverRuns() {
            long key = armedKey;
            cuda.budget().streamCallbackRan(key);
            cuda.callbacks().fireKey(key);
        }
    }

    @BeforeEach
    void noDriverHere() {
        CudaTestSupport.assumeNoCudaDriver();
    }

    @AfterEach
    void closeTheService() {
        cuda.close();
    }

    private List<Event> waitedOn(StreamOrder order, int n) {
        List<Event> es = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Event e = new Event(order);
            order.join(e);
            es.add(e);
        }
        return es;
    }

    /** The stream runs its first {@code n} events: they complete in record order. */
    private static void streamRuns(List<Event> es, int n) {
        for (int i = 0; i < n; i++) {
            es.get(i).done = true;
        }
    }

    @Test
    void aThousandWaitsOnOneStreamHoldOneStreamCallbackBehindTheOldest() {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        List<Event> es = waitedOn(order, 1_000);

        assertThat(order.covers()).isEqualTo(1);
        assertThat(cuda.budget().inFlight()).as("room taken from the budget").isEqualTo(1);
        assertThat(es.getFirst().armedKey).as("the cover stands behind the oldest event").isNotZero();
        assertThat(es.stream().skip(1).allMatch(e -> e.armedKey == 0)).isTrue();
    }

    /**
     * Measured on the H200 at 23432c9: CudaLatency died twice within 4 s, SIGSEGV in {@code cuStreamWaitEvent} under
     * {@code ensureCover} on a poller thread. The cover was armed behind the oldest member while another thread's
     * sweep completed that member and dropped its hold, and the benchmark then closed the point: the event was
     * destroyed under the driver call. The arm holds the event itself.
     */
    @Test
    void aCoverIsArmedOnlyBehindAnEventItHoldsEvenIfTheEventCompletesMeanwhile() {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        Event e = new Event(order);
        e.meanwhile = () -> order.completeUpTo(e.seq); // a sweep on another thread completes it and lets it go
        order.join(e);

        assertThat(e.completions.get()).isEqualTo(1);
        assertThat(e.armsUnheld.get()).as("stream callbacks armed behind an event nothing held").isZero();
        assertThat(e.holds.get()).as("every hold dropped again").isZero();
    }

    /**
     * A cover deferred for room is armed by the budget's armer under the hold the deferral took: its point may be
     * closed meanwhile (no new hold can be taken), and the arm must still be made, under that hold.
     */
    @Test
    void aDeferredCoverIsArmedUnderItsDeferralsHoldAfterItsPointIsClosed() throws InterruptedException {
        List<Event> armedAtOnce = new ArrayList<>();
        for (int s = 0; s < 4; s++) { // the room, taken
            armedAtOnce.add(waitedOn(new StreamOrder(cuda, CONTEXT, null), 1).getFirst());
        }
        Event deferred = waitedOn(new StreamOrder(cuda, CONTEXT, null), 1).getFirst();
        assertThat(cuda.budget().deferred()).isEqualTo(1);
        deferred.refuseHolds = true;

        Event first = armedAtOnce.getFirst();
        first.done = true;
        first.coverRuns(); // room again: the armer arms the deferred cover

        assertThat(await(() -> deferred.armedKey != 0, 5_000)).as("the deferred cover armed").isTrue();
        assertThat(deferred.armsUnheld.get()).isZero();
    }

    @Test
    void whenTheCoverRunsEveryFinishedEventCompletesInOneSweepOfFewProbes() throws InterruptedException {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        List<Event> es = waitedOn(order, 1_000);
        streamRuns(es, 600);

        es.getFirst().coverRuns();

        assertThat(await(() -> order.pending() == 400, 5_000)).as("events 1–600 completed").isTrue();
        assertThat(es.subList(0, 600)).allMatch(e -> e.completions.get() == 1);
        assertThat(es.subList(600, 1_000)).allMatch(e -> e.completions.get() == 0 && e.failure == null);
        long probed = es.stream().filter(e -> e.probes.get() > 0).count(); // sweeps repeat while the burst lasts
        assertThat(probed).as("events probed: a binary search, not a probe per event").isLessThan(40);
        assertThat(await(() -> es.get(600).armedKey != 0, 5_000)).as("the cover moved to the new oldest").isTrue();
    }

    /**
     * The H200's event bursts (CudaBurstProfile at 23432c9) spent their largest share in the engine's poller probing
     * each of a thousand held events of one stream with its own {@code cuEventQuery}. Stream order answers most of
     * those probes: an event recorded after one found incomplete a moment ago is incomplete too.
     */
    @Test
    void anEnginesProbesOfEventsAfterOneFoundIncompleteAMomentAgoAskNoDriver() {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null, 60_000_000_000L); // "a moment": all of this test
        List<Event> es = waitedOn(order, 1_000);
        es.forEach(e -> e.probes.set(0));

        assertThat(order.probe(es.get(10))).isFalse();
        for (Event e : es.subList(10, 1_000)) {
            assertThat(order.probe(e)).as("event %d", e.seq).isFalse();
        }
        for (Event e : es.subList(0, 10)) {
            assertThat(order.probe(e)).as("event %d", e.seq).isFalse();
        }

        assertThat(es.subList(11, 1_000)).as("later events: answered by the order").allMatch(e -> e.probes.get() == 0);
        assertThat(es.get(10).probes.get()).as("its own event: always queried").isEqualTo(2);
        assertThat(es.getFirst().probes.get()).as("an earlier event: queried").isEqualTo(1);
        assertThat(es.subList(1, 10)).as("and the events after it, answered by that").allMatch(e -> e.probes.get() == 0);
    }

    @Test
    void anAnswerIncompleteStandsForLaterEventsOnlyForAMoment() throws InterruptedException {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null, 1_000_000L);
        List<Event> es = waitedOn(order, 3);
        assertThat(order.probe(es.get(0))).isFalse();
        Thread.sleep(5);
        streamRuns(es, 3);

        assertThat(order.probe(es.get(2))).as("after the moment: queried (nothing else knew), and seen complete").isTrue();
    }

    @Test
    void aProbeThatFindsAnEventCompleteHasTheNextSweepCompleteEveryWaitUpToIt() throws InterruptedException {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        List<Event> es = waitedOn(order, 1_000);
        streamRuns(es, 600);

        assertThat(order.probe(es.get(599))).as("event 600, queried").isTrue();
        es.getFirst().coverRuns(); // the cover behind event 1 runs: its sweep starts from what the probe found

        assertThat(await(() -> order.pending() == 400, 5_000)).as("events 1–600 completed").isTrue();
        assertThat(es.subList(0, 600)).allMatch(e -> e.completions.get() == 1);
        assertThat(es.subList(600, 1_000)).allMatch(e -> e.completions.get() == 0 && e.failure == null);
        assertThat(await(() -> es.get(600).armedKey != 0, 5_000)).as("the cover moved to the new oldest").isTrue();
        int queried = es.get(300).probes.get();
        assertThat(order.probe(es.get(300))).as("an event before the newest known complete").isTrue();
        assertThat(es.get(300).probes.get()).as("answered by the order").isEqualTo(queried);
    }

    @Test
    void whileAStreamsCoverWaitsForRoomAProbeThatFindsAnEventCompleteHasTheSweeperCompleteItsWaits()
            throws InterruptedException {
        for (int s = 0; s < 4; s++) { // the room, taken
            waitedOn(new StreamOrder(cuda, CONTEXT, null), 1);
        }
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        List<Event> es = waitedOn(order, 100);
        assertThat(order.coverDeferred()).isTrue();
        streamRuns(es, 60);

        assertThat(order.probe(es.get(59))).isTrue();

        assertThat(await(() -> order.pending() == 40, 5_000)).as("events 1–60 completed").isTrue();
        assertThat(es.subList(0, 60)).as("on the sweeper's thread, not the prober's")
                .allMatch(e -> e.completions.get() == 1 && e.completedOn != Thread.currentThread());
    }

    @Test
    void aLoneWaitsProbeThatFindsItsEventCompleteWakesNoOtherThread() {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        Event e = waitedOn(order, 1).getFirst();
        e.done = true;

        assertThat(order.probe(e)).isTrue();

        assertThat(cuda.sweeper().thread()).as("the sweeper: its cover, launched, completes it").isNull();
        e.coverRuns();
        assertThat(e.completions.get()).isEqualTo(1);
    }

    @Test
    void noSweepEverCompletesAnEventTheStreamHasNotRun() throws InterruptedException {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        List<Event> es = waitedOn(order, 300);
        int[] steps = {1, 7, 8, 64, 65, 200, 299, 300};
        Event cover = es.getFirst();
        for (int ran : steps) {
            streamRuns(es, ran);
            cover.coverRuns();
            int expected = 300 - ran;
            assertThat(await(() -> order.pending() == expected, 5_000)).as("pending after %d ran", ran).isTrue();
            for (int i = 0; i < 300; i++) {
                assertThat(es.get(i).completions.get()).as("event %d after %d ran", i + 1, ran)
                        .isEqualTo(i < ran ? 1 : 0);
            }
            if (ran < 300) {
                Event next = es.get(ran);
                assertThat(await(() -> next.armedKey != 0, 5_000)).isTrue();
                cover = next;
            }
        }
    }

    @Test
    void theBinarySearchFindsTheNewestFinishedEventForEveryPrefix() {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        for (int n = 1; n <= 40; n++) {
            for (int ran = 0; ran <= n; ran++) {
                List<Event> es = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    es.add(new Event(order));
                }
                streamRuns(es, ran);
                StreamOrder.Member[] ms = es.toArray(new StreamOrder.Member[0]);
                assertThat(StreamOrder.newestComplete(ms, false)).as("n %d, ran %d", n, ran).isEqualTo(ran - 1);
                assertThat(StreamOrder.newestComplete(ms, true)).as("n %d, ran %d, oldest first", n, ran)
                        .isEqualTo(ran - 1);
                int probes = es.stream().mapToInt(e -> e.probes.get()).sum();
                assertThat(probes).isLessThanOrEqualTo(4 + 2 * (32 - Integer.numberOfLeadingZeros(n)));
            }
        }
    }

    @Test
    void streamsBeyondTheRoomCompleteWhenTheirContextsCallbacksRun() throws InterruptedException {
        List<List<Event>> streams = new ArrayList<>();
        for (int s = 0; s < 10; s++) { // room for 4: six covers are deferred
            streams.add(waitedOn(new StreamOrder(cuda, CONTEXT, null), 100));
        }
        assertThat(cuda.budget().deferred()).isEqualTo(6);
        streams.forEach(es -> streamRuns(es, 100));

        // the driver runs every armed cover whose event is done (the room freed meanwhile lets the armer arm more)
        assertThat(await(() -> {
            driverRunsArmedCovers();
            return all.stream().allMatch(e -> e.completions.get() == 1);
        }, 5_000)).as("every event of every stream completed").isTrue();
        assertThat(await(() -> cuda.budget().deferred() == 0, 5_000)).as("deferred covers dropped").isTrue();
    }

    @Test
    void aLoneWaitThatItsCoverCompletesWakesNoOtherThread() throws InterruptedException {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        Event e = waitedOn(order, 1).getFirst();
        e.done = true;

        e.coverRuns();

        assertThat(e.completions.get()).isEqualTo(1);
        assertThat(e.holds.get()).as("its hold, dropped at once").isZero();
        assertThat(cuda.sweeper().thread()).as("the sweeper, never needed").isNull();
    }

    @Test
    void noEventIsProbedAfterItsHoldWasDroppedWhileCoversCompleteWaitsConcurrently() throws InterruptedException {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        List<Event> es = waitedOn(order, 2_000);
        Thread stream = Thread.ofPlatform().start(() -> { // the GPU runs on while covers run and sweeps probe
            for (int i = 0; i < es.size(); i++) {
                es.get(i).done = true;
                if (i % 50 == 0) {
                    Thread.yield();
                }
            }
        });
        long until = System.nanoTime() + 10_000_000_000L;
        while (order.pending() > 0 && System.nanoTime() < until) {
            driverRunsArmedCovers();
            Thread.onSpinWait();
        }
        stream.join();
        assertThat(order.pending()).isZero();
        assertThat(es).allMatch(e -> e.completions.get() == 1);
        assertThat(es.stream().mapToInt(e -> e.probesUnheld.get()).sum()).as("probes of events nothing held").isZero();
        assertThat(await(() -> es.stream().allMatch(e -> e.holds.get() == 0), 5_000)).as("every hold dropped").isTrue();
    }

    @Test
    void anEventNobodyWaitsForAnyMoreIsDroppedAndItsHoldGivenBack() throws InterruptedException {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        List<Event> es = waitedOn(order, 10);
        es.get(5).wanted = false;
        streamRuns(es, 1);

        es.getFirst().coverRuns();

        assertThat(await(() -> order.pending() == 8, 5_000)).isTrue();
        assertThat(await(() -> es.get(5).holds.get() == 0, 5_000)).as("the dropped event's hold").isTrue();
        assertThat(es.get(5).completions.get()).isZero();
        assertThat(es.get(0).holds.get()).as("the completed event's hold").isZero();
    }

    @Test
    void closingTheProducerFailsEveryWaitOfItsStream() {
        OwnerLifetime lifetime = new OwnerLifetime(cuda, "a test producer");
        StreamOrder order = new StreamOrder(cuda, CONTEXT, lifetime);
        List<Event> es = waitedOn(order, 50);

        lifetime.end();

        assertThat(es).allMatch(e -> e.failure instanceof SyncCancelledException);
        assertThat(order.pending()).isZero();
        Event late = new Event(order);
        order.join(late);
        assertThat(late.failure).as("a wait joining after the close").isInstanceOf(SyncCancelledException.class);
    }

    @Test
    void aProbeThatFindsTheContextDeadFailsEveryWaitOfTheStream() throws InterruptedException {
        StreamOrder order = new StreamOrder(cuda, CONTEXT, null);
        List<Event> es = waitedOn(order, 20);
        streamRuns(es, 1);
        DeviceLostException lost = new DeviceLostException(BackendKind.CUDA, "sticky error (test)");
        es.getLast().probeError = lost;

        es.getFirst().coverRuns();

        assertThat(await(() -> es.stream().skip(1).allMatch(e -> e.failure == lost), 5_000)).isTrue();
        assertThat(es.getFirst().completions.get()).as("the event its cover reported").isEqualTo(1);
    }

    /** What the driver does: runs the stream callback armed behind every event that is done. */
    private void driverRunsArmedCovers() {
        for (Event e : List.copyOf(all)) {
            long key = e.armedKey;
            if (key != 0 && e.done && cuda.callbacks().registered(key)) {
                cuda.budget().streamCallbackRan(key);
                cuda.callbacks().fireKey(key);
            }
        }
    }

    private static boolean await(BooleanSupplier condition, long millis) throws InterruptedException {
        long until = System.nanoTime() + millis * 1_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > until) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }
}
