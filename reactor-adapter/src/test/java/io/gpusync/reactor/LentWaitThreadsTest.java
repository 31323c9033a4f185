package io.gpusync.reactor;

import io.gpusync.BackendKind;
import io.gpusync.SyncWaiter;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.spi.BlockingWaiter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A blocking waiter whose backend lends threads ({@link BlockingWaiter#waitThreads()}) is waited on, probed and
 * completed on a lent thread, with no hand-off and no waiter thread of the engine's; lent tasks count against the
 * engine's pool bound, a wait the lender refuses is probed instead, and disposal is not over before every lent
 * task has returned.
 */
class LentWaitThreadsTest {
    private final ExecutorService lentThreads = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("lent-", 0).daemon(true).factory());
    private final AtomicInteger tasksLent = new AtomicInteger();
    private final Executor lender = task -> {
        tasksLent.incrementAndGet();
        lentThreads.execute(task);
    };
    private final Queue<String> waitingThreads = new ConcurrentLinkedQueue<>();
    private SyncEngine engine;
    private CpuTimeline timeline;

    @BeforeEach
    void start() {
        engine = GpuSync.builder().name("lend").waiterThreads(2).build();
        timeline = new CpuTimeline();
    }

    @AfterEach
    void stop() {
        timeline.signal(Long.MAX_VALUE);
        engine.dispose();
        lentThreads.shutdownNow();
    }

    @Test
    void aWaitIsWaitedOnAndCompletedOnALentThreadWithNoWaiterThreadOfTheEngine() {
        SyncWaiter waiter = lending(timeline.at(1).waiter(), waitingThreads, lender);
        assertThat(engine.pathFor(waiter)).isEqualTo(WaitPath.BLOCKING);
        AtomicReference<String> deliveredOn = new AtomicReference<>();

        StepVerifier.create(engine.await(waiter, Duration.ofSeconds(30))
                        .doOnSuccess(v -> deliveredOn.set(Thread.currentThread().getName())))
                .then(() -> timeline.signal(1))
                .verifyComplete();

        assertThat(deliveredOn.get()).startsWith("lent-");
        assertThat(waitingThreads).isNotEmpty().allSatisfy(name -> assertThat(name).startsWith("lent-"));
        assertThat(engineThreadNames()).noneMatch(name -> name.startsWith("gpusync-lend-waiter-"));
    }

    @Test
    void aPointSignalledBeforeSubscriptionIsProbedOnALentThreadNotTheSubscribingOne() {
        timeline.signal(1);
        AtomicReference<String> deliveredOn = new AtomicReference<>();

        StepVerifier.create(engine.await(lending(timeline.at(1).waiter(), waitingThreads, lender), Duration.ZERO)
                        .doOnSuccess(v -> deliveredOn.set(Thread.currentThread().getName())))
                .verifyComplete();

        assertThat(waitingThreads).isNotEmpty().allSatisfy(name -> assertThat(name).startsWith("lent-"));
        assertThat(deliveredOn.get()).startsWith("lent-");
    }

    @Test
    void lentTasksCountAgainstThePoolBoundAndTheWaitsBeyondItAreProbed() {
        List<SyncWaiter> waiters = List.of(lending(timeline.at(1).waiter(), waitingThreads, lender),
                lending(timeline.at(1).waiter(), waitingThreads, lender), lending(timeline.at(1).waiter(), waitingThreads, lender));
        CountDownLatch done = new CountDownLatch(3);
        waiters.forEach(w -> engine.await(w, Duration.ofSeconds(30)).subscribe(null, e -> { }, done::countDown));

        assertThat(tasksLent.get()).as("two pool permits: two lent tasks, the third wait probed").isEqualTo(2);
        assertThat(engine.pendingWaits()).isEqualTo(3);
        timeline.signal(1);
        awaitLatch(done);
    }

    @Test
    void aWaitTheLenderRefusesIsProbedInstead() {
        Executor refusing = task -> {
            throw new RejectedExecutionException("full");
        };
        AtomicReference<String> deliveredOn = new AtomicReference<>();

        StepVerifier.create(engine.await(lending(timeline.at(1).waiter(), waitingThreads, refusing), Duration.ofSeconds(30))
                        .doOnSuccess(v -> deliveredOn.set(Thread.currentThread().getName())))
                .then(() -> timeline.signal(1))
                .verifyComplete();

        assertThat(deliveredOn.get()).doesNotStartWith("lent-");
        assertThat(engine.pendingWaits()).isZero();
    }

    @Test
    void aLenderThatThrowsAnythingElseIsTakenAsRefusingAndHoldsNeitherAPermitNorTheDisposal() {
        AtomicInteger calls = new AtomicInteger();
        Executor buggy = task -> {
            if (calls.incrementAndGet() <= 2) { // as many as the pool's permits: a leaked one would refuse the third
                throw new IllegalStateException("a lender's bug");
            }
            lender.execute(task);
        };
        for (long v = 1; v <= 3; v++) {
            long value = v;
            StepVerifier.create(engine.await(lending(timeline.at(v).waiter(), waitingThreads, buggy),
                            Duration.ofSeconds(30)))
                    .then(() -> timeline.signal(value))
                    .verifyComplete();
        }

        assertThat(tasksLent.get()).as("the third wait was lent").isEqualTo(1);
        assertThat(engine.disposeGracefully().toFuture()).succeedsWithin(Duration.ofSeconds(10));
    }

    @Test
    void gracefulDisposalCompletesOnlyOnceTheLentTasksHaveReturned() throws InterruptedException {
        CountDownLatch inTheWait = new CountDownLatch(1);
        CountDownLatch mayReturn = new CountDownLatch(1);
        AtomicInteger returned = new AtomicInteger();
        SyncWaiter point = timeline.at(1).waiter();
        SyncWaiter stubborn = lending(new HostWaiters.Forwarding() {
            @Override
            public SyncWaiter inner() {
                return point;
            }

            @Override
            public void await(Duration timeout) { // a slice that outlasts the disposal
                inTheWait.countDown();
                try {
                    mayReturn.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                returned.incrementAndGet();
                throw new io.gpusync.SyncTimeoutException(BackendKind.CPU, "slice over");
            }
        }, waitingThreads, lender);
        engine.await(stubborn, Duration.ofSeconds(30)).subscribe(null, e -> { });
        assertThat(inTheWait.await(10, TimeUnit.SECONDS)).isTrue();

        var disposal = engine.disposeGracefully().toFuture();
        Thread.sleep(200);
        assertThat(disposal).as("a lent task is still in its slice").isNotDone();

        mayReturn.countDown();
        assertThat(disposal).succeedsWithin(Duration.ofSeconds(10));
        assertThat(returned.get()).isEqualTo(1);
    }

    private static SyncWaiter lending(SyncWaiter inner, Collection<String> threads, Executor lender) {
        return HostWaiters.lendingBlocking(inner, threads, lender);
    }

    private static List<String> engineThreadNames() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).toList();
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
