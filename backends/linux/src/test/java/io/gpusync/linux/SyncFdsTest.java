package io.gpusync.linux;

import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Ownership of raw fds: what {@link SyncFds} checks, owns and closes. */
class SyncFdsTest {

    @Test
    void adoptRefusesANumberThatIsNotAnOpenFdSoItCanNeverCloseTheFileThatLaterReusesIt() {
        EventFd gone = EventFd.create();
        int number = gone.fd();
        gone.close(); // no point minted: the fd is closed now
        assertThatThrownBy(() -> SyncFds.adopt(number)).isInstanceOf(SyncInvalidArgumentException.class)
                .hasMessageContaining("EBADF").hasMessageContaining("fd " + number);
        assertThatThrownBy(() -> SyncFds.adopt(-3)).isInstanceOf(SyncInvalidArgumentException.class);
    }

    @Test
    void anAdoptedFdIsClosedOnceItsPointIsClosed() {
        try (EventFd source = EventFd.create()) {
            int copy = SyncFds.duplicate(source.fd());
            SyncPoint adopted = SyncFds.adopt(copy);
            assertThatCode(() -> Fcntl.requireOpen(copy)).doesNotThrowAnyException();
            adopted.waiter().close();
            assertThatThrownBy(() -> Fcntl.requireOpen(copy)).isInstanceOf(SyncInvalidArgumentException.class);
        }
    }

    @Test
    void aDuplicateIsAnIndependentFdOnTheSameFile() {
        EventFd source = EventFd.create();
        int copy = SyncFds.duplicate(source.fd());
        assertThat(copy).isNotEqualTo(source.fd());
        SyncPoint adopted = SyncFds.adopt(copy);
        source.signal();
        source.close(); // the caller's fd is gone ...
        assertThat(adopted.isSignaled()).isTrue(); // ... the duplicate still sees the same counter
        adopted.waiter().close();
    }

    @Test
    void duplicatingANumberThatIsNotOpenIsAnInvalidArgument() {
        assertThatThrownBy(() -> SyncFds.duplicate(987_654)).isInstanceOf(SyncInvalidArgumentException.class)
                .hasMessageContaining("EBADF");
        assertThatThrownBy(() -> SyncFds.duplicate(-1)).isInstanceOf(SyncInvalidArgumentException.class);
    }
}
