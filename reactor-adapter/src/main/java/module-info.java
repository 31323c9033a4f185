/** gpusync's reactive engine: SyncPoints as {@code Mono<Void>} waits. */
module io.gpusync.reactor {
    requires transitive io.gpusync.core;
    requires transitive reactor.core;
    requires org.reactivestreams;
    exports io.gpusync.reactor;
}
