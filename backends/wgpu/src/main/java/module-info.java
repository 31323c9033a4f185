/** gpusync's wgpu backend: wgpu submissions (not supported on this platform: reports SyncNotSupportedException). */
module io.gpusync.wgpu {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    exports io.gpusync.wgpu;
}
