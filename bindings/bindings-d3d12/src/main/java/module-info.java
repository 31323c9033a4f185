/** Downcalls to gpusync's D3D12 shim (over vkd3d), and the shim. Only gpusync's own modules may read them; see bindings/README.md. */
module io.gpusync.bindings.d3d12 {
    exports io.gpusync.bindings.d3d12 to io.gpusync.d3d12, io.gpusync.test, io.gpusync.benchmarks;
}
