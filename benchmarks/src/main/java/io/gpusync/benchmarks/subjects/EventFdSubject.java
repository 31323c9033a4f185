package io.gpusync.benchmarks.subjects;

import io.gpusync.SyncWaiter;
import io.gpusync.linux.EventFd;

import java.util.ArrayList;
import java.util.List;

/** One Linux eventfd per point, signalled with {@code write(1)}: the engine's epoll path. */
public final class EventFdSubject implements Subject {
    /** fds kept free for the JVM, Netty and the rest of the process under {@code ulimit -n}. */
    static final int RESERVED_FDS = 2_000;
    /** A pending eventfd wait holds its point's fd and the engine watch's duplicate of it. */
    static final int FDS_PER_WAIT = 2;

    /** Open files that {@code points} live points need under {@code ulimit -n}. */
    public static long fdsFor(long points) {
        return points * FDS_PER_WAIT + RESERVED_FDS;
    }

    @Override
    public String name() {
        return "eventfd";
    }

    @Override
    public String description() {
        return "one Linux eventfd per point (EventFd.create()), signalled by EventFd.signal() (write 1)";
    }

    @Override
    public int maxLivePoints() {
        long limit = Limits.openFiles();
        // two fds per pending wait: the point's eventfd and the engine's watch of it (its own duplicate, see FdWatch)
        return limit <= 0 ? 10_000 : (int) Math.max(0, Math.min(Integer.MAX_VALUE, (limit - RESERVED_FDS) / FDS_PER_WAIT));
    }

    @Override
    public Stream newStream() {
        return new FdStream();
    }

    private static final class FdStream implements Stream {
        private final List<EventFd> fds = new ArrayList<>();
        private final List<SyncWaiter> waiters = new ArrayList<>();

        @Override
        public Point next() {
            EventFd fd = EventFd.create();
            SyncWaiter waiter = fd.point().waiter();
            synchronized (this) {
                fds.add(fd);
                waiters.add(waiter);
            }
            return new Point() {
                @Override
                public SyncWaiter waiter() {
                    return waiter;
                }

                @Override
                public void signal() {
                    fd.signal();
                }

                @Override
                public void reset() {
                    fd.drain();
                }
            };
        }

        @Override
        public synchronized void signalAll() {
            fds.forEach(EventFd::signal);
        }

        @Override
        public long registrations() {
            return -1;
        }

        @Override
        public synchronized void close() {
            // the fd closes once the EventFd and every waiter made from it are closed
            waiters.forEach(SyncWaiter::close);
            fds.forEach(EventFd::close);
            waiters.clear();
            fds.clear();
        }
    }
}
