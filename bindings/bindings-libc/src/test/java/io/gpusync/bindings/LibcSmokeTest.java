package io.gpusync.bindings;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpusync.bindings.libc.ErrnoCalls;
import io.gpusync.bindings.libc.Libc;
import io.gpusync.bindings.libc.pollfd;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class LibcSmokeTest {

    @Test
    void eventfdRoundTripWithErrno() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cs = ErrnoCalls.allocateCallState(arena);
            int fd = ErrnoCalls.eventfd(cs, 0, Libc.EFD_CLOEXEC() | Libc.EFD_NONBLOCK());
            assertThat(fd).as("eventfd errno %d", ErrnoCalls.errno(cs)).isGreaterThanOrEqualTo(0);

            MemorySegment buf = arena.allocate(ValueLayout.JAVA_LONG);
            // empty non-blocking eventfd: read fails with EAGAIN
            assertThat(ErrnoCalls.read(cs, fd, buf, 8)).isEqualTo(-1);
            assertThat(ErrnoCalls.errno(cs)).isEqualTo(Libc.EAGAIN());

            MemorySegment fds = pollfd.allocate(arena);
            pollfd.fd(fds, fd);
            pollfd.events(fds, (short) Libc.POLLIN());
            assertThat(ErrnoCalls.poll(cs, fds, 1, 0)).isZero();

            buf.set(ValueLayout.JAVA_LONG, 0, 3L);
            assertThat(ErrnoCalls.write(cs, fd, buf, 8)).isEqualTo(8);
            assertThat(ErrnoCalls.poll(cs, fds, 1, 1000)).isEqualTo(1);
            assertThat(pollfd.revents(fds) & Libc.POLLIN()).isEqualTo(Libc.POLLIN());

            buf.set(ValueLayout.JAVA_LONG, 0, 0L);
            assertThat(ErrnoCalls.read(cs, fd, buf, 8)).isEqualTo(8);
            assertThat(buf.get(ValueLayout.JAVA_LONG, 0)).isEqualTo(3L);

            assertThat(ErrnoCalls.close(cs, fd)).isZero();
            assertThat(ErrnoCalls.close(cs, -1)).isEqualTo(-1);
            assertThat(ErrnoCalls.errno(cs)).isEqualTo(Libc.EBADF());
        }
    }

    @Test
    void generatedDowncallsWork() {
        int fd = Libc.eventfd(1, Libc.EFD_CLOEXEC());
        assertThat(fd).isGreaterThanOrEqualTo(0);
        int ep = Libc.epoll_create1(Libc.EPOLL_CLOEXEC());
        assertThat(ep).isGreaterThanOrEqualTo(0);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ev = io.gpusync.bindings.libc.epoll_event.allocate(arena);
            io.gpusync.bindings.libc.epoll_event.events(ev, Libc.EPOLLIN());
            assertThat(Libc.epoll_ctl(ep, Libc.EPOLL_CTL_ADD(), fd, ev)).isZero();
            MemorySegment cs = ErrnoCalls.allocateCallState(arena);
            assertThat(ErrnoCalls.epollWait(cs, ep, ev, 1, 1000)).isEqualTo(1);
        }
        assertThat(Libc.close(ep)).isZero();
        assertThat(Libc.close(fd)).isZero();
    }
}
