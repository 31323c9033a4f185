package io.gpusync.reactor;

import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Which threads {@link SyncEngine#dispose()} must not block: {@link NonBlockingThreads}. */
class NonBlockingThreadsTest {

    @Test
    void reactorsParallelThreadsAndNettyLoopsMustNotBlockOtherThreadsMay() throws Exception {
        assertThat(NonBlockingThreads.isCurrent()).as("the test thread").isFalse();
        assertThat(on(Schedulers.parallel()::schedule)).as("a parallel thread").isTrue();
        assertThat(on(Schedulers.boundedElastic()::schedule)).as("a boundedElastic thread").isFalse();
        MultiThreadIoEventLoopGroup fastThreadLocal = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        // a loop on plain platform threads (the engine's own are made so) is known by the executor it runs
        MultiThreadIoEventLoopGroup plain = new MultiThreadIoEventLoopGroup(1,
                (java.util.concurrent.ThreadFactory) r -> Thread.ofPlatform().daemon(true).unstarted(r),
                EpollIoHandler.newFactory());
        try {
            assertThat(on(fastThreadLocal::execute)).as("a Netty loop (FastThreadLocalThread)").isTrue();
            assertThat(on(plain::execute)).as("a Netty loop on a plain thread").isTrue();
        } finally {
            fastThreadLocal.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
            plain.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static boolean on(java.util.concurrent.Executor thread) {
        return Mono.<Boolean>create(sink -> thread.execute(() -> sink.success(NonBlockingThreads.isCurrent())))
                .block(Duration.ofSeconds(5));
    }
}
