package io.gpusync.reactor;

/**
 * Counts live threads of one engine by their names ({@code gpusync-<engine>-…}): all of them, or those that wait
 * on points (all but the timer thread, which an engine keeps from its first timeout until it is disposed).
 */
final class EngineThreadsProbe {
    private EngineThreadsProbe() {
    }

    static long threadsOf(SyncEngine engine) {
        String prefix = "gpusync-" + engine.name() + "-";
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    static long waitingThreadsOf(SyncEngine engine) {
        String prefix = "gpusync-" + engine.name() + "-";
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)
                        && !t.getName().startsWith(prefix + "timer-")).count();
    }
}
