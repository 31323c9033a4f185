/** gpusync's reactive engine: SyncPoints as {@code Mono<Void>} waits. */
module io.gpusync.reactor {
    requires transitive io.gpusync.core;
    requires transitive reactor.core;
    requires transitive org.reactivestreams;
    requires transitive io.netty.transport;
    requires io.netty.common;
    requires io.netty.transport.classes.epoll;
    requires io.netty.transport.unix.common;
    requires static micrometer.core;
    exports io.gpusync.reactor;
}
