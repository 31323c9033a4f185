package io.gpusync.reactor;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link WaiterThreads}, the waiter pool's lock-free hand-off: the permit bound, reuse of idle threads, retirement
 * after the keep-alive, shutdown, and every accepted task run exactly once under many concurrent hand-offs.
 */
class WaiterThreadsTest {
    private final Queue<Thread> made = new ConcurrentLinkedQueue<>();
    private final ThreadFactory factory = r -> {
        Thread t = Thread.ofPlatform().daemon(true).name("waiter-threads-test").unstarted(r);
        made.add(t);
        return t;
    };

    @Test
    void atMostMaxTasksRunAtOnceAndAFullPoolRefusesAtOnce() throws Exception {
        WaiterThreads threads = new WaiterThreads(2, TimeUnit.SECONDS.toNanos(30), factory);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(2);
        Runnable hold = () -> {
            running.countDown();
            await(release);
        };
        assertThat(threads.tryStart(hold)).isTrue();
        assertThat(threads.tryStart(hold)).isTrue();
        assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(threads.tryStart(() -> { })).as("a third task").isFalse();
        release.countDown();
        awaitTrue(() -> threads.tryStart(() -> { }));
        threads.shutdown();
    }

    @Test
    void anIdleThreadIsReusedAndRetiresAfterTheKeepAlive() throws Exception {
        WaiterThreads threads = new WaiterThreads(4, TimeUnit.SECONDS.toNanos(1), factory);
        Set<Thread> ranOn = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < 20; i++) {
            CountDownLatch done = new CountDownLatch(1);
            assertThat(threads.tryStart(() -> {
                ranOn.add(Thread.currentThread());
                done.countDown();
            })).isTrue();
            assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
            awaitTrue(() -> made.stream().allMatch(t -> t.getState() == Thread.State.TIMED_WAITING)); // idle
        }
        assertThat(ranOn).as("one task at a time: one thread").hasSize(1);
        Thread first = ranOn.iterator().next();
        first.join(5_000);
        assertThat(first.isAlive()).as("retired after the keep-alive").isFalse();
        CountDownLatch after = new CountDownLatch(1);
        assertThat(threads.tryStart(after::countDown)).isTrue(); // past its stale idle node, on a new thread
        assertThat(after.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(made).hasSize(2);
        threads.shutdown();
    }

    @Test
    void shutdownEndsIdleThreadsAtOnceBusyOnesAfterTheirTaskAndRefusesLaterTasks() throws Exception {
        WaiterThreads threads = new WaiterThreads(4, TimeUnit.SECONDS.toNanos(30), factory);
        CountDownLatch idleDone = new CountDownLatch(1);
        assertThat(threads.tryStart(idleDone::countDown)).isTrue();
        assertThat(idleDone.await(5, TimeUnit.SECONDS)).isTrue();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch busy = new CountDownLatch(1);
        awaitTrue(() -> made.size() == 1 && made.peek().getState() == Thread.State.TIMED_WAITING);
        assertThat(threads.tryStart(() -> { // the idle thread takes it; a second one stays idle
            busy.countDown();
            await(release);
        })).isTrue();
        assertThat(busy.await(5, TimeUnit.SECONDS)).isTrue();
        CountDownLatch second = new CountDownLatch(1);
        assertThat(threads.tryStart(second::countDown)).isTrue();
        assertThat(second.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(made).hasSize(2);
        Thread busyThread = made.peek();
        Thread idleThread = new ArrayList<>(made).get(1);
        awaitTrue(() -> idleThread.getState() == Thread.State.TIMED_WAITING);

        threads.shutdown();

        idleThread.join(5_000);
        assertThat(idleThread.isAlive()).as("the idle thread").isFalse();
        assertThat(busyThread.isAlive()).as("the busy thread, in its task").isTrue();
        assertThat(threads.tryStart(() -> { })).as("a task after shutdown").isFalse();
        release.countDown();
        busyThread.join(5_000);
        assertThat(busyThread.isAlive()).as("the busy thread, after its task").isFalse();
    }

    @Test
    void underManyConcurrentHandOffsEveryAcceptedTaskRunsOnceAndNeverMoreThanMaxAtOnce() throws Exception {
        int max = 3;
        WaiterThreads threads = new WaiterThreads(max, TimeUnit.MICROSECONDS.toNanos(200), factory); // retire often
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger accepted = new AtomicInteger();
        List<Thread> subscribers = new ArrayList<>();
        for (int s = 0; s < 6; s++) {
            subscribers.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 5_000; i++) {
                    if (threads.tryStart(() -> {
                        mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
                        if ((ran.incrementAndGet() & 7) == 0) {
                            LockSupport.parkNanos(50_000);
                        }
                        running.decrementAndGet();
                    })) {
                        accepted.incrementAndGet();
                    }
                }
            }));
        }
        for (Thread t : subscribers) {
            t.join();
        }
        awaitTrue(() -> ran.get() == accepted.get());
        assertThat(accepted.get()).isPositive();
        assertThat(mostAtOnce.get()).isLessThanOrEqualTo(max);
        threads.shutdown();
        for (Thread t : made) {
            t.join(5_000);
            assertThat(t.isAlive()).isFalse();
        }
        assertThat(ran.get()).isEqualTo(accepted.get());
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Evaluates {@code condition} until it holds (each evaluation may act: it is not repeated after). */
    private static void awaitTrue(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        boolean held;
        while (!(held = condition.getAsBoolean()) && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(held).isTrue();
    }
}
