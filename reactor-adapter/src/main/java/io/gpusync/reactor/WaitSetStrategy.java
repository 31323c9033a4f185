package io.gpusync.reactor;

import io.gpusync.SyncWaiter;
import io.gpusync.spi.WaitSet;
import io.gpusync.spi.WaitSetMember;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link WaitPath#WAIT_SET}: one thread per {@link WaitSet} (e.g. per Vulkan device) serves every wait of
 * that set, blocked in the set's wait-any. New registrations and cancellations wake it through the set's
 * private wake-up primitive (coalesced: one wake-up per batch), so it rebuilds its member list within
 * microseconds; after each wake it probes its members and completes the signalled ones.
 */
final class WaitSetStrategy implements WaitStrategy {
    private final ConcurrentHashMap<WaitSet, Server> servers = new ConcurrentHashMap<>();
    private final Duration slice;
    private final ThreadFactory threads;
    private volatile boolean stopped;

    WaitSetStrategy(Duration slice, ThreadFactory threads) {
        this.slice = slice;
        this.threads = threads;
    }

    @Override
    public WaitPath path() {
        return WaitPath.WAIT_SET;
    }

    @Override
    public boolean accepts(SyncWaiter waiter) {
        return waiter instanceof WaitSetMember;
    }

    @Override
    public void start(PendingWait wait) {
        WaitSet set = ((WaitSetMember) wait.waiter).waitSet();
        Server server = servers.computeIfAbsent(set, Server::new);
        wait.registration = server;
        server.add(wait);
    }

    @Override
    public void release(PendingWait wait) {
        if (wait.registration instanceof Server server && Thread.currentThread() != server.thread) {
            server.wake(); // let the server drop it now rather than at the end of its slice
        }
    }

    @Override
    public void shutdown() {
        stopped = true;
        for (Server s : servers.values()) {
            s.set.wakeUp();
            try {
                s.thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        servers.clear();
    }

    private final class Server implements Runnable {
        final WaitSet set;
        final Thread thread;
        private final Queue<PendingWait> incoming = new ConcurrentLinkedQueue<>();
        private final ArrayList<PendingWait> active = new ArrayList<>();
        private final AtomicBoolean wakePending = new AtomicBoolean();

        Server(WaitSet set) {
            this.set = set;
            this.thread = threads.newThread(this);
            thread.start();
        }

        void add(PendingWait wait) {
            incoming.offer(wait);
            wake();
        }

        void wake() {
            if (wakePending.compareAndSet(false, true)) {
                set.wakeUp();
            }
        }

        @Override
        public void run() {
            List<WaitSetMember> members = new ArrayList<>();
            while (!stopped) {
                wakePending.set(false);
                for (PendingWait w; (w = incoming.poll()) != null; ) {
                    active.add(w);
                }
                active.removeIf(PendingWait::isDone);
                members.clear();
                for (PendingWait w : active) {
                    members.add((WaitSetMember) w.waiter);
                }
                try {
                    set.awaitAny(members, members.isEmpty() ? Duration.ofSeconds(1) : slice);
                } catch (Throwable e) {
                    active.forEach(w -> w.failed(e)); // the whole set failed (device lost)
                    active.clear();
                    continue;
                }
                ProbePass.run(active);
            }
            active.clear();
        }
    }
}
