package io.gpusync.linux;

import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.testsuite.SyncWaiterContract;
import io.gpusync.bindings.libc.ErrnoCalls;
import org.junit.jupiter.api.Nested;

import java.lang.foreign.ValueLayout;

/**
 * The backend contract on Linux fds: an {@link EventFd}'s own point, and a sync fd that gpusync adopted (a
 * duplicate of an eventfd, closed by gpusync once its waiter is closed and no wait is in progress).
 */
class SyncFdContractTest {

    @Nested
    class EventFdPoint extends SyncWaiterContract {
        @Override
        protected Subject newSubject() {
            EventFd eventFd = EventFd.create();
            SyncPoint point = eventFd.point();
            int writer = SyncFds.duplicate(eventFd.fd()); // signals once the EventFd's own handle is closed
            return new OnceSubject() {
                @Override
                public SyncWaiter waiter() {
                    return point.waiter();
                }

                @Override
                protected void doSignal() {
                    addOne(writer);
                }

                @Override
                public void dropProducerHolds() {
                    eventFd.close(); // the point alone keeps the fd open now
                }

                @Override
                public boolean released() {
                    return !isOpen(eventFd.fd());
                }

                @Override
                public void close() {
                    point.waiter().close();
                    eventFd.close();
                    SyncFds.closeQuietly(writer);
                }
            };
        }
    }

    @Nested
    class AdoptedSyncFd extends SyncWaiterContract {
        @Override
        protected Subject newSubject() {
            EventFd eventFd = EventFd.create();
            int adopted = SyncFds.duplicate(eventFd.fd());
            SyncPoint point = SyncFds.adopt(adopted);
            return new OnceSubject() {
                @Override
                public SyncWaiter waiter() {
                    return point.waiter();
                }

                @Override
                protected void doSignal() {
                    eventFd.signal(); // the duplicate shares the eventfd's counter
                }

                @Override
                public boolean released() {
                    return !isOpen(adopted);
                }

                @Override
                public void close() {
                    point.waiter().close();
                    eventFd.close();
                }
            };
        }
    }

    /** Adds 1 to the eventfd counter behind {@code fd}, as {@link EventFd#signal()} does. */
    static void addOne(int fd) {
        Errno.Scratch s = Errno.scratch();
        s.word.set(ValueLayout.JAVA_LONG, 0, 1L);
        if (ErrnoCalls.write(s.callState, fd, s.word, 8) != 8) {
            throw Errno.failure("write", fd, ErrnoCalls.errno(s.callState));
        }
    }

    /** Whether {@code fd} names an open file (F_GETFD), without touching it otherwise. */
    static boolean isOpen(int fd) {
        try {
            Fcntl.requireOpen(fd);
            return true;
        } catch (SyncInvalidArgumentException e) {
            return false;
        }
    }
}
