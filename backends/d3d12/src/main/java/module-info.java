/** gpusync's d3d12 backend: Direct3D 12 fences through vkd3d (gpusync's D3D12 shim). */
module io.gpusync.d3d12 {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    requires io.gpusync.bindings.d3d12;
    requires io.gpusync.linux; // sync files of the shim's fences
    exports io.gpusync.d3d12;
}
