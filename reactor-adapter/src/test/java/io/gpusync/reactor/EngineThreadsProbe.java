package io.gpusync.reactor;

/** Counts live threads of one engine by their names ({@code gpusync-<engine>-…}). */
final class EngineThreadsProbe {
    private EngineThreadsProbe() {
    }

    static long threadsOf(SyncEngine engine) {
        String prefix = "gpusync-" + engine.name() + "-";
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }
}
