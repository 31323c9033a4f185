package io.gpusync.reactor;

import reactor.core.publisher.Hooks;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records what reaches {@link Hooks#onErrorDropped} (and on which thread) while open. */
final class DroppedErrors implements AutoCloseable {
    record Dropped(Throwable error, String thread) {
    }

    final List<Dropped> dropped = new CopyOnWriteArrayList<>();

    DroppedErrors() {
        Hooks.onErrorDropped(e -> dropped.add(new Dropped(e, Thread.currentThread().getName())));
    }

    @Override
    public void close() {
        Hooks.resetOnErrorDropped();
    }
}
