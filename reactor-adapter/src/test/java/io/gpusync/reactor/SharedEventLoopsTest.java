package io.gpusync.reactor;

import io.gpusync.linux.EventFd;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A server's own epoll loops (as Reactor Netty builds them) can receive the engine's completions. */
class SharedEventLoopsTest {

    @Test
    void fdCompletionsRunOnTheGivenEventLoopsWhichTheEngineDoesNotShutDown() {
        MultiThreadIoEventLoopGroup serverLoops = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
        SyncEngine engine = GpuSync.builder().name("shared-loops").eventLoopGroup(serverLoops).build();
        try (EventFd fd = EventFd.create()) {
            assertThat(engine.pathFor(fd.point().waiter())).isEqualTo(WaitPath.EPOLL);
            boolean[] onLoop = new boolean[1];
            StepVerifier.create(engine.await(fd.point(), Duration.ofSeconds(5))
                            .doOnSuccess(v -> onLoop[0] = Thread.currentThread().getName()
                                    .startsWith("multiThreadIoEventLoopGroup")))
                    .then(fd::signal)
                    .verifyComplete();
            assertThat(onLoop[0]).isTrue();
            engine.dispose();
            assertThat(serverLoops.isShuttingDown()).isFalse();
        } finally {
            serverLoops.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void manyWaitsOnOneFdShareOneRegistrationAndAllComplete() {
        SyncEngine engine = GpuSync.builder().name("one-fd").build();
        try (EventFd fd = EventFd.create()) {
            var all = reactor.core.publisher.Flux.range(0, 100)
                    .flatMap(i -> engine.await(fd.point(), Duration.ofSeconds(5)))
                    .then();
            StepVerifier.create(all).then(fd::signal).verifyComplete();
            assertThat(engine.pendingWaits()).isZero();
        } finally {
            engine.dispose();
        }
    }
}
