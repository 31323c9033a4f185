package io.gpusync.reactor;

import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.linux.SyncFds;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On the epoll path an fd that hangs up or reports an error condition without becoming readable fails its
 * wait at once with a typed error, and leaves the loop idle: level-triggered, it would otherwise wake the
 * loop again and again until the wait's own timeout.
 */
class FdHangUpTest {
    private MultiThreadIoEventLoopGroup loops;
    private SyncEngine engine;

    @BeforeEach
    void engineOnOneLoop() {
        loops = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        engine = GpuSync.builder().name("hangup").eventLoopGroup(loops).build();
    }

    @AfterEach
    void stop() {
        engine.dispose();
        loops.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
    }

    @Test
    void aPipeWhoseWriterClosesAfterSubscriptionFailsItsWaitAtOnceAndLeavesTheLoopIdle() throws Exception {
        // the loop thread's /proc/<pid>/task/<tid>, where its CPU time is counted
        Path loopThread = loops.submit(() -> Path.of("/proc").resolve(Files.readSymbolicLink(Path.of("/proc/thread-self"))))
                .get(5, TimeUnit.SECONDS);
        try (Pipe pipe = Pipe.open()) {
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            engine.await(SyncFds.borrow(pipe.readFd()), Duration.ofSeconds(10))
                    .subscribe(v -> { }, outcome::complete, () -> outcome.complete(null));
            roundTripThroughTheLoop(); // the fd is in the loop's epoll set now
            assertThat(outcome).isNotDone();

            pipe.closeWriter(); // EPOLLHUP, and the pipe can never become readable

            Throwable error = outcome.get(1, TimeUnit.SECONDS); // not the 10 s timeout
            assertThat(error).isInstanceOf(SyncBackendException.class).hasMessageContaining("hung up");
            assertThat(((SyncException) error).kind()).isEqualTo(ErrorKind.FATAL);
            assertThat(engine.pendingWaits()).isZero();
            // no registration is left to wake the loop: it sleeps (a spinning loop burns ~all of this 500 ms)
            long before = cpuTicks(loopThread);
            Thread.sleep(500);
            assertThat(cpuTicks(loopThread) - before).as("CPU of the loop thread in 500 ms, in 10 ms ticks")
                    .isLessThan(10);
        }
    }

    @Test
    void aPipeWrittenToBeforeItsWriterClosesCompletesItsWait() throws Exception {
        try (Pipe pipe = Pipe.open()) {
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            engine.await(SyncFds.borrow(pipe.readFd()), Duration.ofSeconds(10))
                    .subscribe(v -> { }, outcome::complete, () -> outcome.complete(null));
            roundTripThroughTheLoop();
            pipe.writeOneByte();
            pipe.closeWriter(); // readable and hung up: readable wins, the point was signalled
            assertThat(outcome.get(5, TimeUnit.SECONDS)).isNull();
        }
    }

    @Test
    void aWriteEndWhoseReaderClosesFailsItsWaitAtOnceWithAnErrorCondition() throws Exception {
        try (Pipe pipe = Pipe.open()) {
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            // a write end never becomes readable; once its reader is gone it reports EPOLLERR
            engine.await(SyncFds.borrow(pipe.writeEnd.intValue()), Duration.ofSeconds(10))
                    .subscribe(v -> { }, outcome::complete, () -> outcome.complete(null));
            roundTripThroughTheLoop();
            pipe.closeReader();
            Throwable error = outcome.get(1, TimeUnit.SECONDS);
            assertThat(error).isInstanceOf(SyncBackendException.class);
            assertThat(((SyncException) error).kind()).isEqualTo(ErrorKind.FATAL);
        }
    }

    /** utime + stime of a thread ({@code /proc/self/task/<tid>/stat}), in clock ticks (10 ms). */
    private static long cpuTicks(Path task) throws IOException {
        String stat = Files.readString(task.resolve("stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" "); // fields from the 3rd on
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    private void roundTripThroughTheLoop() throws Exception {
        loops.submit(() -> { }).get(5, TimeUnit.SECONDS);
    }
}
