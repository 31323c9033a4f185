package io.gpusync.linux;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.ReadableFdWaiter;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EventFdTest {

    @Test
    void anEventFdPointIsSignalledOnceWrittenAndUntilDrained() {
        try (EventFd fd = EventFd.create()) {
            SyncPoint p = fd.point();
            assertThat(p).isInstanceOf(SyncPoint.SyncFd.class);
            assertThat(p.backend()).isEqualTo(BackendKind.LINUX);
            assertThat(p.isSignaled()).isFalse();
            fd.signal();
            fd.signal();
            assertThat(p.isSignaled()).isTrue();
            assertThat(p.isSignaled()).isTrue(); // probing does not consume
            assertThat(fd.drain()).isEqualTo(2);
            assertThat(p.isSignaled()).isFalse();
            assertThat(fd.drain()).isZero();
        }
    }

    @Test
    void aThreadBlockedInPollWakesWhenAnotherThreadSignals() throws Exception {
        try (EventFd fd = EventFd.create()) {
            SyncPoint p = fd.point();
            CompletableFuture<Void> blocked = CompletableFuture.runAsync(() -> p.await(Duration.ofSeconds(10)));
            Thread.sleep(50);
            assertThat(blocked).isNotDone();
            fd.signal();
            blocked.get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aPollWaitTimesOutNoEarlierThanItsTimeoutEvenBelowOneMillisecond() {
        try (EventFd fd = EventFd.create()) {
            for (Duration timeout : new Duration[] {Duration.ofNanos(1), Duration.ofMillis(30)}) {
                long t0 = System.nanoTime();
                assertThatThrownBy(() -> fd.point().await(timeout)).isInstanceOf(SyncTimeoutException.class)
                        .hasMessageContaining("fd " + fd.fd());
                assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(timeout.toNanos());
            }
            assertThatThrownBy(() -> fd.point().await(Duration.ZERO)).isInstanceOf(SyncTimeoutException.class);
        }
    }

    @Test
    void theWaiterAdvertisesItsFdAndABlockingWait() {
        try (EventFd fd = EventFd.create()) {
            var waiter = fd.point().waiter();
            assertThat(waiter).isInstanceOf(BlockingWaiter.class).isInstanceOf(ReadableFdWaiter.class);
            try (var lease = ((ReadableFdWaiter) waiter).leaseReadableFd()) {
                assertThat(lease.fd()).isEqualTo(fd.fd());
            }
        }
    }

    @Test
    void theFdStaysOpenWhileAPointIsInUseAndClosesAfterTheLastOne() {
        EventFd fd = EventFd.create();
        SyncPoint p = fd.point();
        fd.signal();
        fd.close();
        assertThat(p.isSignaled()).isTrue(); // still open: the point holds it
        assertThatThrownBy(fd::signal).isInstanceOf(IllegalStateException.class); // but this handle is closed
        p.waiter().close();
        assertThatThrownBy(p::isSignaled).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aBorrowedFdIsNeverClosedByUs() {
        try (EventFd fd = EventFd.create()) {
            SyncPoint borrowed = SyncFds.borrow(fd.fd());
            borrowed.waiter().close();
            fd.signal();
            assertThat(fd.point().isSignaled()).isTrue();
        }
    }

    @Test
    void aClosedOrBogusFdIsAClearErrorNotACrash() {
        SyncPoint bogus = SyncFds.borrow(987_654);
        assertThatThrownBy(bogus::isSignaled).isInstanceOf(SyncInvalidArgumentException.class)
                .hasMessageContaining("EBADF");
        assertThatThrownBy(() -> SyncFds.adopt(-3)).isInstanceOf(SyncInvalidArgumentException.class);
    }
}
