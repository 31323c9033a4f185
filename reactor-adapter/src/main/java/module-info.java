/** gpusync's reactive engine: SyncPoints as {@code Mono<Void>} waits. */
module io.gpusync.reactor {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    requires io.gpusync.linux; // SyncFds: a sync file's poll readiness
    requires io.gpusync.bindings.libc; // FdWatch reads poll(2) through the libc bindings; no exported signature uses them
    requires transitive reactor.core;
    requires transitive org.reactivestreams;
    // Netty is optional: only the EPOLL wait path uses it, and only Netty 4.2 with native epoll
    requires static io.netty.transport;
    requires static io.netty.common;
    requires static io.netty.transport.classes.epoll;
    requires static io.netty.transport.unix.common;
    requires static micrometer.core;
    // the gpusync.wait observations (SyncEngine.Builder.observationRegistry); optional like the meters
    requires static micrometer.observation;
    requires static micrometer.commons;
    exports io.gpusync.reactor;
}
