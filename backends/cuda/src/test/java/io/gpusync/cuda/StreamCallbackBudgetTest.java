package io.gpusync.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
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
 * How {@link StreamCallbackBudget} schedules arms, without a GPU and against a service of each test's own: each
 * entry stands for "arm a stream callback behind an event" and its work is a flag the test sets; running a callback
 * is what the driver would do ({@link StreamCallbackBudget#streamCallbackRan} then the registration fires). The
 * driver-side behaviour — that the 57th callback behind event waits blocks, that deferred waits complete on a GPU —
 * is {@code StreamCallbackBudgetGpuTest}'s.
 */
class StreamCallbackBudgetTest {
    private static final MemorySegment CONTEXT = MemorySegment.ofAddress(0x5eed_0000L);
    private final List<Work> works = new ArrayList<>();
    /** A service of this test's own: its room, queue and armer thread start empty. */
    private final CudaDriverService cuda = new CudaDriverService(StreamCallbackBudget.DEFAULT_CAPACITY);
    private final StreamCallbacks callbacks = cuda.callbacks();
    private final StreamCallbackBudget budget = cuda.budget();

    /** One arm: counts what the budget does with it. */
    private final class Work implements StreamCallbackBudget.Arming, StreamCallbacks.Slot {
        final long key = callbacks.register(CONTEXT, null, this);
        volatile boolean done;
        volatile boolean armed;
        volatile Thread armedOn;
        final AtomicInteger probes = new AtomicInteger();
        final AtomicInteger holds = new AtomicInteger();
        final AtomicInteger leaves = new AtomicInteger();
        volatile boolean fired;
        volatile SyncException failure;

        Work() {
            works.add(this);
        }

        @Override
        public long key() {
            return key;
        }

        @Override
        public long context() {
            return CONTEXT.address();
        }

        @Override
        public boolean arm(boolean held) {
            armedOn = Thread.currentThread();
            armed = true;
            return true;
        }

        @Override
        public boolean complete() {
            probes.incrementAndGet();
            return done;
        }

        @Override
        public void hold() {
            holds.incrementAndGet();
        }

        @Override
        public void leave() {
            leaves.incrementAndGet();
        }

        @Override
        public void fire() {
            fired = true;
        }

        @Override
        public void fail(SyncException error) {
            failure = error;
        }

        /** What the driver does when the armed callback runs. */
        void callbackRuns() {
            budget.streamCallbackRan(key);
            callbacks.fireKey(key);
        }
    }

    @BeforeEach
    void noDriverHere() {
        CudaTestSupport.assumeNoCudaDriver();
    }

    @AfterEach
    void releaseEverything() throws InterruptedException {
        works.forEach(w -> callbacks.cancel(w.key)); // deferred entries are dropped, not armed
        boolean drained = await(() -> {
            works.stream().filter(w -> w.armed).forEach(w -> budget.streamCallbackRan(w.key));
            return budget.deferred() == 0 && budget.inFlight() == 0;
        }, 5_000);
        assertThat(drained).as("every deferred entry dropped and every bit of room given back").isTrue();
        cuda.close(); // the armer and the fault watch end once idle
    }

    private List<Work> armed(int n) {
        List<Work> ws = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Work w = new Work();
            budget.arm(w);
            ws.add(w);
        }
        return ws;
    }

    @Test
    void armsOnTheCallersThreadWhileThereIsRoomAndDefersTheRestWithoutBlocking() {
        int room = budget.capacity();
        List<Work> ws = armed(room + 8);
        assertThat(ws.subList(0, room)).allSatisfy(w -> {
            assertThat(w.armed).isTrue();
            assertThat(w.armedOn).isEqualTo(Thread.currentThread());
            assertThat(w.holds.get()).as("an arm made at once holds nothing").isZero();
        });
        assertThat(budget.inFlight()).isEqualTo(room);
        assertThat(budget.deferred()).isEqualTo(8);
        assertThat(ws.subList(room, room + 8)).allSatisfy(w -> {
            assertThat(w.armed).isFalse();
            assertThat(w.holds.get()).as("a deferred arm keeps its event alive").isEqualTo(1);
        });
    }

    @Test
    void aCallbackThatRunsGivesItsRoomToTheOldestDeferredArm() throws InterruptedException {
        int room = budget.capacity();
        List<Work> ws = armed(room + 3);
        ws.get(0).callbackRuns();
        Work oldest = ws.get(room);
        assertThat(await(() -> oldest.armed, 2_000)).as("the oldest deferred arm took the room").isTrue();
        assertThat(oldest.armedOn.getName()).isEqualTo("gpusync-cuda-armer");
        assertThat(oldest.leaves.get()).as("it left the queue and let its event go").isEqualTo(1);
        assertThat(ws.get(room + 1).armed).isFalse();
        assertThat(budget.inFlight()).isEqualTo(room);
    }

    @Test
    void aDeferredArmWhoseWorkIsDoneCompletesByProbeEvenBehindOlderOnesThatNeverComplete() throws InterruptedException {
        armed(budget.capacity() + 500); // the room and a long queue, all behind work that never ends
        Work quick = new Work();
        budget.arm(quick);
        quick.done = true;
        long t0 = System.nanoTime();
        assertThat(await(() -> quick.fired, 2_000)).as("completed by a probe, not starved by 500 older entries").isTrue();
        System.out.printf("BUDGET a deferred arm behind 500 older ones completed %d µs after its work was done%n",
                (System.nanoTime() - t0) / 1_000);
        assertThat(quick.armed).as("it never needed the room").isFalse();
        assertThat(quick.leaves.get()).isEqualTo(1);
    }

    /**
     * Issue 15, measured on the H200 (CudaLatency, 1,000 waits in flight that never complete): a wait behind a
     * 10 ms kernel was seen 80 ms late, because every long-pending entry was probed every 20 ms, 2,000 of them
     * asked for 100,000 probes/s, and the new entry, once past its young probes, waited its turn in the
     * 10,000/s budget. Entries pending for long now back off with their age, so they leave the budget to it.
     */
    @Test
    void anArmDeferredBehindThousandsPendingForLongIsSeenDoneWithinAFractionOfItsAge() throws InterruptedException {
        armed(budget.capacity() + 2_000);
        Thread.sleep(1_000); // they have been pending for a second: long-pending
        long lateMicros = tenMillisArmSeenAfterMicros();
        System.out.printf("BUDGET a 10 ms arm behind 2,000 pending for 1 s was seen %,d µs after its work was done%n",
                lateMicros);
        assertThat(lateMicros).as("seen within about half its age, not after a turn of 2,000 in the budget (≈ 200 ms)")
                .isLessThan(60_000);
    }

    /**
     * Measured on the H200 (CudaLatency, 10,000 waits in flight that never complete): one 10 ms wait in a hundred was
     * seen ≈ 1.07 s late. Entries pending for seconds reach the longest interval (2^30 ns) and fall due together on
     * its grid, more than the budget holds; the backlog drains at the budget's rate for up to half a second, and a
     * newer entry that came due meanwhile queued behind it (its due time is later). Due entries are now probed
     * earliest deadline first — a probe's deadline is its due time plus its interval — so the backlog, whose
     * intervals are a second long, yields to an entry whose interval is milliseconds.
     */
    @Test
    void aNewArmIsNotHeldBackByABacklogOfLongPendingOnesFallingDueTogether() throws InterruptedException {
        armed(budget.capacity() + 10_000);
        Thread.sleep(4_000); // long-pending: their intervals reach 2^30 ns, their probes fall due together on its grid
        long worstMicros = 0;
        long end = System.nanoTime() + 2_300_000_000L; // across at least two of those grid instants
        while (System.nanoTime() - end < 0) {
            worstMicros = Math.max(worstMicros, tenMillisArmSeenAfterMicros());
        }
        System.out.printf("BUDGET 10 ms arms behind 10,000 pending for 4-6.3 s: the worst was seen %,d µs after its"
                + " work was done%n", worstMicros);
        // before: 784-974 ms at the grid's bursts here (1.07 s on the H200); after: 70-125 ms for the first arm,
        // a few ms for the rest
        assertThat(worstMicros).as("not behind a backlog of thousands falling due together (≈ 0.8-1 s)")
                .isLessThan(400_000);
    }

    /** Arms a deferred entry whose work takes 10 ms; how long after the work was done it was seen done (µs). */
    private long tenMillisArmSeenAfterMicros() throws InterruptedException {
        Work tenMillis = new Work();
        budget.arm(tenMillis);
        Thread.sleep(10); // its kernel
        tenMillis.done = true;
        long t0 = System.nanoTime();
        assertThat(await(() -> tenMillis.fired, 5_000)).isTrue();
        return (System.nanoTime() - t0) / 1_000;
    }

    @Test
    void theArmerProbesNoMoreThanItsBudgetHoweverManyArmsAreDeferred() throws InterruptedException {
        List<Work> ws = armed(budget.capacity() + 3_000);
        Thread.sleep(300); // past the first, closely spaced probes of every entry
        long before = ws.stream().mapToLong(w -> w.probes.get()).sum();
        long t0 = System.nanoTime();
        Thread.sleep(1_000);
        long probes = ws.stream().mapToLong(w -> w.probes.get()).sum() - before;
        double perSecond = probes * 1e9 / (System.nanoTime() - t0);
        System.out.printf("BUDGET 3,000 deferred arms, nothing completing: %.0f probes/s (budget %d/s)%n",
                perSecond, StreamCallbackBudget.PROBES_PER_SECOND);
        assertThat(perSecond).isLessThanOrEqualTo(StreamCallbackBudget.PROBES_PER_SECOND * 1.2);
        assertThat(probes).as("the deferred entries are still probed").isPositive();
    }

    /**
     * Issue 15's idle goal (≤ 0.02 of a core per 1,000 pending idle waits), measured on the H200: with 1,000 waits
     * behind a 4 s kernel the armer used 2.1–2.7 % of a core, because it woke at least every millisecond while
     * anything was deferred and once per entry's own due time; a wake-up of a parked thread costs ≈ 40–60 µs of
     * CPU on these VMs whatever it then does. Deferred entries' probes now fall on a shared grid and the armer
     * relies on being woken when room frees.
     */
    @Test
    void aThousandArmsDeferredForLongCostTheArmerLittleCpu() throws Exception {
        armed(budget.capacity() + 1_000);
        Thread.sleep(1_500); // long-pending
        Thread armer = budget.armerThread();
        assertThat(armer.getName()).isEqualTo("gpusync-cuda-armer");
        long cpu0 = threadCpuNanos(armer);
        long t0 = System.nanoTime();
        Thread.sleep(2_000);
        double share = (threadCpuNanos(armer) - cpu0) / (double) (System.nanoTime() - t0);
        System.out.printf("BUDGET armer CPU with 1,000 arms deferred for 1.5-3.5 s: %.3f %% of a core%n", 100 * share);
        // 0.14-0.46 % here after the fix (the thread clock of these guests charges a timed wake-up 50-140 µs);
        // 1.6-1.8 % before it
        assertThat(share).as("≤ 0.02 of a core per 1,000 pending waits, with room to spare").isLessThan(0.01);
    }

    @Test
    void aDeferredArmWhoseRegistrationFailedIsDroppedAndLetsItsEventGo() throws InterruptedException {
        List<Work> ws = armed(budget.capacity() + 1);
        Work deferred = ws.get(ws.size() - 1);
        DeviceLostException lost = new DeviceLostException(BackendKind.CUDA, "the test's fault", null);
        callbacks.failKey(deferred.key, lost);
        assertThat(deferred.failure).isSameAs(lost);
        assertThat(await(() -> deferred.leaves.get() == 1, 2_000)).isTrue();
        assertThat(budget.deferred()).isZero();
        assertThat(deferred.armed).isFalse();
    }

    @Test
    void aStickyErrorInTheContextGivesBackTheRoomOfItsCallbacks() throws InterruptedException {
        int room = budget.capacity();
        List<Work> ws = armed(room + 2);
        callbacks.failContext(CONTEXT.address(), new DeviceLostException(BackendKind.CUDA, "sticky", null));
        assertThat(budget.inFlight()).isZero();
        assertThat(ws).allSatisfy(w -> assertThat(w.failure).isInstanceOf(DeviceLostException.class));
        assertThat(await(() -> budget.deferred() == 0, 2_000)).isTrue();
        ws.forEach(w -> w.fired = true); // their callbacks fire nothing: they ran with the error
    }

    /** java.management through reflection: the test sources compile as part of module io.gpusync.core. */
    private static long threadCpuNanos(Thread t) throws ReflectiveOperationException {
        Object mx = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        return (long) Class.forName("java.lang.management.ThreadMXBean").getMethod("getThreadCpuTime", long.class)
                .invoke(mx, t.threadId());
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
