/** gpusync's d3d11 backend: Direct3D 11 keyed mutexes (not supported on this platform: reports SyncNotSupportedException). */
module io.gpusync.d3d11 {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    exports io.gpusync.d3d11;
}
