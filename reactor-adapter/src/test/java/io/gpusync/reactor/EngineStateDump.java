package io.gpusync.reactor;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A test's view into an engine that did not finish in time: its pending waits (path, age, the pollers' state of each,
 * the registration it holds, whether its waiter reads signalled now), which poller list holds each, and the stacks of
 * the engine's threads. Printed by a watchdog before a test's own timeouts end the waits, so a wait that was lost can
 * be told from one that was slow. Reads thread-confined state racily: for diagnosis only.
 */
public final class EngineStateDump {
    private EngineStateDump() {
    }

    /** Prints {@code engine}'s state after {@code delay} unless the returned watchdog is closed first. */
    public static AutoCloseable after(Duration delay, SyncEngine engine) {
        Thread watchdog = Thread.ofPlatform().daemon().name("engine-state-dump").start(() -> {
            try {
                Thread.sleep(delay);
            } catch (InterruptedException closed) {
                return;
            }
            System.out.println(describe(engine));
        });
        return watchdog::interrupt;
    }

    static String describe(SyncEngine engine) {
        StringBuilder b = new StringBuilder("ENGINE STATE of ").append(engine).append('\n');
        try {
            List<PendingWait> waits = ((PendingWaits) field(SyncEngine.class, "pending").get(engine)).snapshot();
            Map<PendingWait, String> lists = pollerLists(engine, b);
            Field held = field(PendingWait.class, "held");
            b.append(waits.size()).append(" pending waits\n");
            int shown = 0;
            for (PendingWait w : waits) {
                if (shown++ == 30) {
                    break;
                }
                PollState p = w.polled;
                long now = System.nanoTime();
                b.append("  ").append(w).append(" age ").append((now - w.startNanos) / 1000).append(" µs, held ")
                        .append(held.get(w)).append(", in ").append(lists.getOrDefault(w, "no poller list"));
                if (p != null) {
                    b.append(", handOverTo ").append(p.handOverTo).append(", watched ").append(p.watched)
                            .append(", next probe in ").append((p.nextProbeNanos - now) / 1000).append(" µs");
                    if (p.probeTimes != null) {
                        b.append(", window ").append(p.probeTimes.hotFrom()).append("..").append(p.probeTimes.hotUntil())
                                .append(p.probeTimes.narrow() ? " narrow" : "");
                    }
                }
                b.append(", signalled now: ").append(signalledNow(w)).append('\n');
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            b.append("  (state unreadable: ").append(e).append(")\n");
        }
        Thread.getAllStackTraces().forEach((t, stack) -> {
            if (t.getName().startsWith("gpusync-")) {
                b.append("  thread ").append(t.getName()).append(' ').append(t.getState()).append('\n');
                for (StackTraceElement f : stack) {
                    b.append("      at ").append(f).append('\n');
                }
            }
        });
        return b.toString();
    }

    /** Which list of which poller worker holds each wait; appends each poller's sizes to {@code b}. */
    private static Map<PendingWait, String> pollerLists(SyncEngine engine, StringBuilder b)
            throws ReflectiveOperationException {
        Map<PendingWait, String> where = new IdentityHashMap<>();
        Object strategies = field(SyncEngine.class, "strategies").get(engine);
        Set<SpinThenPoll> probes = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Object s : (List<?>) field(WaitStrategies.class, "chain").get(strategies)) {
            if (s instanceof SpinThenPoll p) {
                probes.add(p);
            }
            for (Field f : s.getClass().getDeclaredFields()) {
                if (f.getType() == SpinThenPoll.class) {
                    f.setAccessible(true);
                    probes.add((SpinThenPoll) f.get(s));
                }
            }
        }
        for (SpinThenPoll probe : probes) {
            for (Poller poller : (Poller[]) field(SpinThenPoll.class, "pollers").get(probe)) {
                Poller.Worker worker = (Poller.Worker) field(Poller.class, "worker").get(poller);
                java.util.Collection<?> incoming = (java.util.Collection<?>) field(Poller.class, "incoming").get(poller);
                b.append("  poller ").append(worker.thread).append(": active ").append(worker.active.size())
                        .append(", cold ").append(worker.cold.size()).append(", incoming ").append(incoming.size())
                        .append(", stranded workers ").append(poller.strandedWorkers()).append('\n');
                List.copyOf(worker.active).forEach(w -> where.put(w, "active"));
                List.copyOf(worker.cold).forEach(w -> where.put(w, "cold"));
                incoming.forEach(w -> where.put((PendingWait) w, "incoming"));
            }
        }
        return where;
    }

    private static String signalledNow(PendingWait w) {
        try {
            return String.valueOf(w.waiter.isSignaled());
        } catch (RuntimeException e) {
            return e.toString();
        }
    }

    private static Field field(Class<?> type, String name) throws NoSuchFieldException {
        Field f = type.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }
}
