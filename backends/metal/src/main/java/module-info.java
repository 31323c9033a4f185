/** gpusync's metal backend: Metal shared events (not supported on this platform: reports SyncNotSupportedException). */
module io.gpusync.metal {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    exports io.gpusync.metal;
}
