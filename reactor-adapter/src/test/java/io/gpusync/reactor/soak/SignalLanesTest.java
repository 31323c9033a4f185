package io.gpusync.reactor.soak;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The soak's signalling lanes: one source's stuck driver calls hold up no other source's signals. */
class SignalLanesTest {
    private final SignalLanes lanes = new SignalLanes();
    private final CountDownLatch driverReturns = new CountDownLatch(1);

    @AfterEach
    void release() {
        driverReturns.countDown();
        lanes.close();
    }

    /** A signal call that does not return until the test ends, as vkd3d's queue Signal did behind NVIDIA's lock. */
    private void stuckSignal() {
        try {
            driverReturns.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aSourceWhoseSignalCallsNeverReturnHoldsUpNoOtherSourcesSignals() throws InterruptedException {
        for (int i = 0; i < 8; i++) { // every actor and parallel worker of the d3d12 lane ends up stuck
            lanes.run("d3d12", SignalLanes.Path.ACTOR, 0, this::stuckSignal);
            lanes.run("d3d12", SignalLanes.Path.PARALLEL_LATER, 0, this::stuckSignal);
        }
        CountDownLatch given = new CountDownLatch(3 * 50);
        for (int i = 0; i < 50; i++) {
            lanes.run("eventfd", SignalLanes.Path.ACTOR, 0, given::countDown);
            lanes.run("eventfd", SignalLanes.Path.ACTOR_LATER, i * 10, given::countDown);
            lanes.run("eventfd", SignalLanes.Path.PARALLEL_LATER, i * 10, given::countDown);
        }
        assertThat(given.await(10, TimeUnit.SECONDS)).as("eventfd's signals, beside a stuck d3d12 lane").isTrue();
    }

    @Test
    void aSourcesSignalsRunOnItsOwnThreadsAndItsParallelWorkersAreNonBlockingThreads() throws InterruptedException {
        Set<String> threads = ConcurrentHashMap.newKeySet();
        Set<Boolean> nonBlocking = ConcurrentHashMap.newKeySet();
        CountDownLatch ran = new CountDownLatch(40);
        for (int i = 0; i < 20; i++) {
            lanes.run("opencl", SignalLanes.Path.ACTOR_LATER, 100, () -> {
                threads.add(Thread.currentThread().getName());
                ran.countDown();
            });
            lanes.run("opencl", SignalLanes.Path.PARALLEL_LATER, 100, () -> {
                threads.add(Thread.currentThread().getName());
                nonBlocking.add(Schedulers.isInNonBlockingThread());
                ran.countDown();
            });
        }
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(threads).allMatch(n -> n.startsWith("soak-opencl-"));
        assertThat(nonBlocking).containsExactly(true);
    }

    @Test
    void anInlineActionRunsOnTheCallersThread() {
        Thread[] ranOn = new Thread[1];
        lanes.run("eventfd", SignalLanes.Path.INLINE, 0, () -> ranOn[0] = Thread.currentThread());
        assertThat(ranOn[0]).isSameAs(Thread.currentThread());
    }
}
