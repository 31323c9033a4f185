package io.gpusync.opencl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusync.testsuite.ChildJvm;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.internal.NativeLibraries;
import io.gpusync.test.opencl.OpenClContext;
import io.gpusync.test.opencl.OpenClUserEvent;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import io.gpusync.bindings.opencl.OpenCl;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The PoCL 3.1 race of two dependencies ending at once: when one dependency of a command fails while another
 * completes on a second thread, PoCL can both fail the command and queue it to run, and its pthread device then uses
 * the freed command (SIGSEGV in {@code libpocl-devices-pthread.so}, or one of PoCL's assertions). Markers on an
 * in-order queue, each behind its own user event, depend on their user event and on the marker before them, so two
 * threads ending those user events (one failing, one completing) hit it in the first rounds; the C program
 * {@code benchmarks/probes/pocl_failed_and_completed_dependencies.c} shows the same without gpusync.
 *
 * <p>{@link OpenClUserEvent} therefore sets statuses one at a time. Run in a child JVM under glibc's malloc checker: on
 * a gpusync that lets two threads set statuses at once, the child crashes.
 */
class OpenClUserEventStatusRaceTest {
    static final int ROUNDS = 200;
    static final int BATCH = 64;

    @BeforeAll
    static void driver() {
        assumeTrue(NativeLibraries.isAvailable(Cl.LIBRARY), Cl.LIBRARY + " is not installed: no OpenCL on this machine");
        try {
            OpenClContext.createDefault().close();
        } catch (SyncNotSupportedException e) {
            assumeTrue(false, "no OpenCL platform/device: " + e.getMessage());
        }
    }

    @Test
    void userEventsEndedFromTwoThreadsAtOnceOneFailingNeverCrashTheProcess() throws Exception {
        String out = ChildJvm.runOk(Child.class, List.of(), ChildJvm.mallocChecked(228), Integer.toString(ROUNDS));
        assertThat(out).contains(ROUNDS + " rounds of " + BATCH + " markers");
    }

    /**
     * The same race with one thread: markers enqueued through gpusync's queue ({@code OpenClContext.enqueueMarker}, so
     * each depends on its user event and on the marker before it), the first {@code k} user events completed, then the
     * rest failed at once, while PoCL's own thread is still completing marker {@code k - 1} and broadcasting to marker
     * {@code k}. Setting statuses one at a time does not cover it: before the failing status change waited for the
     * other dependencies of its markers to settle, the child died of PoCL's assertion
     * ({@code pocl_update_event_running_unlocked}) or hung on a marker that never ended.
     */
    @Test
    void aUserEventFailingWhileTheCommandBeforeItsMarkerCompletesNeverCrashesTheProcess() throws Exception {
        String out = ChildJvm.runOk(OneThreadChild.class, List.of(), ChildJvm.mallocChecked(228),
                Integer.toString(ROUNDS * 5));
        assertThat(out).contains(ROUNDS * 5 + " rounds of " + BATCH + " queued markers");
    }

    /**
     * A user event failing on one thread while another enqueues markers on the same in-order queue (the soak's OpenCL
     * source). PoCL fails the markers behind the user event, and every later one on the queue, walking them on the
     * failing thread; a marker enqueued meanwhile is linked to one being failed, and both threads then used a freed
     * command: SIGSEGV in {@code clSetUserEventStatus} ({@code pthread_cond_broadcast} on a freed command's data) and in
     * the enqueue, within seconds, before gpusync's enqueues and failing status changes excluded each other.
     */
    @Test
    void aUserEventFailingWhileAnotherThreadEnqueuesOnTheQueueOfItsMarkerNeverCrashesTheProcess() throws Exception {
        String out = ChildJvm.runOk(EnqueueingChild.class, List.of(), ChildJvm.mallocChecked(235), "8");
        assertThat(out).contains("markers enqueued while user events failed");
    }

    /**
     * {@code args}: seconds. One thread enqueues markers, each behind a fresh user event, on one queue; two threads end
     * the user events in turn, a third of them failing; a fourth closes each marker, gate and user event once the marker
     * has ended.
     */
    public static final class EnqueueingChild {
        record Ticket(OpenClUserEvent user, SyncPoint.OpenCl gate, SyncPoint.OpenCl marker) {
        }

        public static void main(String[] args) throws Exception {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[0]));
            BlockingQueue<Ticket> made = new LinkedBlockingQueue<>();
            BlockingQueue<Ticket> ended = new LinkedBlockingQueue<>();
            AtomicLong failed = new AtomicLong();
            long enqueued = 0;
            try (OpenClContext cl = OpenClContext.createDefault()) {
                List<Thread> enders = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    enders.add(Thread.ofPlatform().start(() -> endUserEvents(made, ended, failed, end)));
                }
                Thread closer = Thread.ofPlatform().start(() -> closeEnded(ended, end));
                while (System.nanoTime() - end < 0) {
                    if (made.size() > 64) {
                        Thread.onSpinWait();
                        continue;
                    }
                    OpenClUserEvent user = cl.newUserEvent();
                    SyncPoint.OpenCl gate = user.newPoint();
                    made.add(new Ticket(user, gate, cl.enqueueMarker(gate)));
                    enqueued++;
                }
                for (Thread t : enders) {
                    t.join();
                }
                for (Ticket t; (t = made.poll()) != null; ) { // every marker can end now: the closer finishes
                    t.user().complete();
                    ended.add(t);
                }
                closer.join();
                cl.finish();
            }
            System.out.println(enqueued + " markers enqueued while user events failed (" + failed + " failed)");
        }

        static void endUserEvents(BlockingQueue<Ticket> made, BlockingQueue<Ticket> ended, AtomicLong failed, long end) {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            while (System.nanoTime() - end < 0) {
                Ticket t = made.poll();
                if (t == null) {
                    Thread.onSpinWait();
                    continue;
                }
                if (random.nextInt(3) == 0) {
                    t.user().fail(-1_000_001);
                    failed.incrementAndGet();
                } else {
                    t.user().complete();
                }
                ended.add(t);
            }
        }

        /** Closes each ended ticket once its marker has ended (a failed user event fails every later marker too). */
        static void closeEnded(BlockingQueue<Ticket> ended, long end) {
            while (System.nanoTime() - end < 0 || !ended.isEmpty()) {
                Ticket t = ended.poll();
                if (t == null) {
                    Thread.onSpinWait();
                    continue;
                }
                while (Cl.statusOr(t.marker().event(), OpenCl.CL_COMPLETE()) > OpenCl.CL_COMPLETE()) {
                    Thread.onSpinWait();
                }
                t.marker().waiter().close();
                t.gate().waiter().close();
                t.user().close();
            }
        }
    }

    /** {@code args}: rounds; each ends its user events from one thread, the first {@code k} completed, the rest failed. */
    public static final class OneThreadChild {
        public static void main(String[] args) {
            int rounds = Integer.parseInt(args[0]);
            try (OpenClContext cl = OpenClContext.createDefault()) {
                for (int round = 0; round < rounds; round++) {
                    List<OpenClUserEvent> users = new ArrayList<>();
                    List<SyncPoint.OpenCl> gates = new ArrayList<>();
                    List<SyncPoint.OpenCl> markers = new ArrayList<>();
                    for (int i = 0; i < BATCH; i++) {
                        OpenClUserEvent user = cl.newUserEvent();
                        users.add(user);
                        gates.add(user.newPoint());
                        markers.add(cl.enqueueMarker(gates.get(i)));
                    }
                    int k = 1 + round % (BATCH - 1);
                    for (int i = 0; i < k; i++) {
                        users.get(i).complete();
                    }
                    for (long spin = (round * 7919L) % 4000; spin > 0; spin--) {
                        Thread.onSpinWait(); // a varying moment of PoCL's thread completing marker k - 1
                    }
                    for (int i = k; i < BATCH; i++) {
                        users.get(i).fail(-1_000_001);
                    }
                    for (SyncPoint.OpenCl marker : markers) { // every marker ends: each one's user event has ended
                        while (Cl.statusOr(marker.event(), OpenCl.CL_COMPLETE()) > OpenCl.CL_COMPLETE()) {
                            Thread.onSpinWait();
                        }
                        marker.waiter().close();
                    }
                    gates.forEach(g -> g.waiter().close());
                    users.forEach(OpenClUserEvent::close);
                }
            }
            System.out.println(rounds + " rounds of " + BATCH + " queued markers");
        }
    }

    /**
     * {@code args}: rounds. Each round: BATCH markers behind BATCH user events, enqueued the way an application
     * enqueues its own commands (no flush before the user events end), then the user events ended by two threads at
     * once through gpusync.
     */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            int rounds = Integer.parseInt(args[0]);
            int failed = 0;
            try (OpenClContext cl = OpenClContext.createDefault(); Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
                for (int round = 0; round < rounds; round++) {
                    List<OpenClUserEvent> users = new ArrayList<>();
                    List<MemorySegment> markers = new ArrayList<>();
                    for (int i = 0; i < BATCH; i++) {
                        OpenClUserEvent user = cl.newUserEvent();
                        users.add(user);
                        MemorySegment waitList = arena.allocateFrom(ValueLayout.ADDRESS, user.event());
                        ClErrors.check(OpenCl.clEnqueueMarkerWithWaitList(cl.queue(), 1, waitList, out),
                                "clEnqueueMarkerWithWaitList", "test");
                        markers.add(out.get(ValueLayout.ADDRESS, 0));
                    }
                    CountDownLatch start = new CountDownLatch(1);
                    Thread failing = Thread.ofPlatform().start(() -> end(users, 0, start));
                    Thread completing = Thread.ofPlatform().start(() -> end(users, 1, start));
                    start.countDown();
                    failing.join();
                    completing.join();
                    for (MemorySegment marker : markers) { // each one's user event has ended: so does the marker
                        int status;
                        while ((status = Cl.statusOr(marker, OpenCl.CL_COMPLETE())) > OpenCl.CL_COMPLETE()) {
                            Thread.onSpinWait();
                        }
                        failed += status < 0 ? 1 : 0;
                    }
                    users.forEach(OpenClUserEvent::close);
                    cl.finish();
                    markers.forEach(OpenCl::clReleaseEvent);
                }
            }
            System.out.println(rounds + " rounds of " + BATCH + " markers, " + failed + " failed");
        }

        /** Ends every other user event from {@code parity}: even ones fail, odd ones complete. */
        static void end(List<OpenClUserEvent> users, int parity, CountDownLatch start) {
            try {
                start.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            for (int i = parity; i < users.size(); i += 2) {
                if (i % 2 == 0) {
                    users.get(i).fail(-1_000_001);
                } else {
                    users.get(i).complete();
                }
            }
        }
    }
}
