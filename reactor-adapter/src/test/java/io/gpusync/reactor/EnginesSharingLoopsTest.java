package io.gpusync.reactor;

import io.gpusync.linux.EventFd;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Several engines built on one event loop group share one epoll registration per fd per loop (Netty keeps
 * only one: a second would take the first's events), so a signal reaches every wait on the fd, whichever
 * engine serves it and whatever the others' subscribers do.
 */
class EnginesSharingLoopsTest {
    private MultiThreadIoEventLoopGroup loops;
    private SyncEngine a;
    private SyncEngine b;

    @BeforeEach
    void twoEnginesOnOneLoop() {
        loops = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        a = GpuSync.builder().name("a").eventLoopGroup(loops).build();
        b = GpuSync.builder().name("b").eventLoopGroup(loops).build();
    }

    @AfterEach
    void stop() {
        a.dispose();
        b.dispose();
        loops.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void twoEnginesOnOneLoopGroupBothCompleteOnOneSignalOfTheSameFd() throws Exception {
        try (EventFd fd = EventFd.create()) {
            CompletableFuture<Void> doneA = completion(a, fd);
            CompletableFuture<Void> doneB = completion(b, fd);
            roundTripThroughTheLoop();
            fd.signal();
            doneB.get(2, TimeUnit.SECONDS);
            doneA.get(2, TimeUnit.SECONDS);
            assertThat(a.pendingWaits() + b.pendingWaits()).isZero();
        }
    }

    @Test
    void cancellingOneEnginesWaitLeavesTheOtherEnginesWaitOnTheSameFdWatched() throws Exception {
        try (EventFd fd = EventFd.create()) {
            Disposable cancelled = a.await(fd.point(), Duration.ofSeconds(10)).subscribe();
            CompletableFuture<Void> doneB = completion(b, fd);
            roundTripThroughTheLoop();
            cancelled.dispose();
            roundTripThroughTheLoop();
            fd.signal();
            doneB.get(2, TimeUnit.SECONDS);
        }
    }

    @Test
    void disposingOneEngineLeavesTheOtherEnginesWaitsOnTheSameFdWatched() throws Exception {
        try (EventFd fd = EventFd.create()) {
            CompletableFuture<Void> doneA = completion(a, fd);
            CompletableFuture<Void> doneB = completion(b, fd);
            roundTripThroughTheLoop();
            a.dispose();
            assertThat(doneA).isCompletedExceptionally();
            roundTripThroughTheLoop();
            fd.signal();
            doneB.get(2, TimeUnit.SECONDS);
        }
    }

    @Test
    void aSubscriberThatThrowsStrandsNoOtherWaitOnTheSameFdAndDoesNotStallTheLoop() throws Exception {
        try (EventFd fd = EventFd.create()) {
            a.await(fd.point(), Duration.ofSeconds(10)).subscribe(new ThrowsOnComplete());
            CompletableFuture<Void> sameEngine = completion(a, fd);
            CompletableFuture<Void> otherEngine = completion(b, fd);
            roundTripThroughTheLoop();
            fd.signal();
            // at once: an exception escaping into Netty's loop would make it sleep 1 s before going on
            sameEngine.get(500, TimeUnit.MILLISECONDS);
            otherEngine.get(500, TimeUnit.MILLISECONDS);
        }
    }

    private static CompletableFuture<Void> completion(SyncEngine engine, EventFd fd) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        engine.await(fd.point(), Duration.ofSeconds(10))
                .subscribe(v -> { }, done::completeExceptionally, () -> done.complete(null));
        return done;
    }

    private void roundTripThroughTheLoop() throws Exception {
        loops.submit(() -> { }).get(5, TimeUnit.SECONDS);
    }

    /** A subscriber breaking §2.13 on purpose: its {@code onComplete} throws. */
    private static final class ThrowsOnComplete implements CoreSubscriber<Void> {
        @Override
        public void onSubscribe(Subscription s) {
        }

        @Override
        public void onNext(Void unused) {
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onComplete() {
            throw new IllegalStateException("a subscriber that throws on purpose");
        }
    }
}
