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
import java.util.concurrent.locks.LockSupport;

/**
 * {@link WaitPath#WAIT_SET}: one thread per {@link WaitSet} (e.g. per Vulkan device) serves every wait of
 * that set, blocked in the set's wait-any. New registrations and cancellations wake it through the set's
 * private wake-up primitive (coalesced: one wake-up per batch), so it rebuilds its member list within
 * microseconds; after each wake it probes its members and completes the signalled ones. A server retires
 * (its thread ends) when its set fails — a lost or closed device: its waits fail with that error — or after
 * 30 s with nothing to wait for, or once its set is closed; the next wait on the set starts a new one. An idle
 * server parks outside the set's wait, so that it holds nothing alive (a Vulkan device is released as soon as its
 * last waiter is closed).
 */
final class WaitSetStrategy implements WaitStrategy {
    /** A server with nothing to wait for retires after this long. */
    private static final long IDLE_RETIRE_NANOS = Duration.ofSeconds(30).toNanos();
    /** How long an idle server parks before it looks at its set and its idle time again. */
    private static final long IDLE_PARK_NANOS = Duration.ofSeconds(1).toNanos();
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
        Server server = servers.get(set);
        if (server == null) { // not computeIfAbsent: it would start the thread under the map's bin lock
            Server fresh = new Server(set);
            server = servers.putIfAbsent(set, fresh);
            if (server == null) {
                server = fresh;
                try {
                    fresh.startThread();
                } catch (Throwable e) { // no thread to be had: the server goes, and so do waits queued on it
                    fresh.startFailed(e);
                    throw e;
                }
            }
        }
        if (wait.attach(server.membership())) {
            server.add(wait);
        }
    }

    /**
     * Stops every server without waiting: each is woken and its thread ends after its current slice (the engine's
     * {@link EngineThreads} tells when they have ended).
     */
    @Override
    public void shutdown() {
        stopped = true;
        for (Server s : servers.values()) {
            LockSupport.unpark(s.thread); // an idle one parks outside its set
            try {
                s.set.wakeUp();
            } catch (RuntimeException e) {
                // a broken set: its thread ends at the end of its slice
            }
        }
        servers.clear();
    }

    private final class Server implements Runnable {
        final WaitSet set;
        volatile Thread thread;
        private final Queue<PendingWait> incoming = new ConcurrentLinkedQueue<>();
        private final ArrayList<PendingWait> active = new ArrayList<>();
        private final AtomicBoolean wakePending = new AtomicBoolean();
        private volatile boolean retired;

        Server(WaitSet set) {
            this.set = set;
        }

        /** Once the server is in the map (a server that lost the race to it never gets a thread). */
        void startThread() {
            Thread t = threads.newThread(this);
            thread = t;
            t.start();
        }

        /** Its thread could not be started: leaves the map and fails the waits queued on it meanwhile. */
        void startFailed(Throwable e) {
            servers.remove(set, this);
            retired = true; // an add after this hands its wait to a new server
            for (PendingWait w; (w = incoming.poll()) != null; ) {
                w.failed(e);
            }
        }

        /**
         * A wait's membership: when the wait terminates elsewhere, the server is woken to drop it now rather
         * than at the end of its slice (a wake-up that throws — a lost device — is reported by the wait).
         */
        Registration membership() {
            return () -> {
                if (Thread.currentThread() != thread) {
                    wake();
                }
            };
        }

        /**
         * Leaves the map so that new waits start a new server; waits that raced in after the last drain are
         * handed to it (the strategy's {@code start}) unless the strategy is stopping. The server leaves the map
         * <em>before</em> it says it is retired, so that an {@link #add} that sees {@code retired} cannot find this
         * server in the map again and hand the wait back to it (an unbounded recursion between add and retire).
         */
        private void retire() {
            servers.remove(set, this);
            retired = true;
            for (PendingWait w; (w = incoming.poll()) != null; ) {
                if (w.isDone()) {
                    continue;
                }
                if (stopped) {
                    w.engineDisposed();
                    continue;
                }
                try {
                    start(w);
                } catch (Throwable e) {
                    w.failed(e);
                }
            }
        }

        void add(PendingWait wait) {
            incoming.offer(wait);
            if (retired && incoming.remove(wait)) {
                start(wait); // this server retired before draining it: a new server takes it
                return;
            }
            wake();
        }

        void wake() {
            if (wakePending.compareAndSet(false, true)) {
                LockSupport.unpark(thread); // idle: parked outside the set
                set.wakeUp();
            }
        }

        @Override
        public void run() {
            try {
                serve();
            } catch (Throwable unexpected) { // never leave waits behind on a dead server
                active.forEach(w -> w.failed(unexpected));
                throw unexpected;
            } finally {
                active.clear();
                if (!retired) {
                    retire();
                }
            }
        }

        private void serve() {
            List<WaitSetMember> members = new ArrayList<>();
            long idleSince = System.nanoTime();
            while (!stopped) {
                wakePending.set(false);
                for (PendingWait w; (w = incoming.poll()) != null; ) {
                    active.add(w);
                }
                active.removeIf(PendingWait::isDone);
                if (!active.isEmpty()) {
                    idleSince = System.nanoTime();
                } else if (System.nanoTime() - idleSince > IDLE_RETIRE_NANOS) {
                    return; // nothing to serve for a while: retire, giving the thread (and the set) back
                }
                if (active.isEmpty()) {
                    if (set.isClosed()) {
                        return; // its device is gone: no wait can join it again
                    }
                    // idle: park without entering the set, so that the device is not held alive by this thread
                    LockSupport.parkNanos(this, IDLE_PARK_NANOS);
                    continue;
                }
                members.clear();
                for (PendingWait w : active) {
                    members.add((WaitSetMember) w.waiter);
                }
                try {
                    set.awaitAny(members, slice);
                } catch (Throwable e) {
                    // the whole set failed (device lost, device closed): fail its waits and retire — never
                    // spin on a broken set; a later wait gets a fresh server, which fails fast
                    for (PendingWait w : active) {
                        w.failed(e);
                    }
                    return;
                }
                ProbePass.run(active);
            }
        }
    }
}
