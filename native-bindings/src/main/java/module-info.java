/**
 * jextract-generated FFM bindings used by gpusync's backends, plus the few hand-written downcalls
 * jextract cannot make (errno capture) and the downcalls to gpusync's D3D12 shim. No logic lives here. See native-bindings/README.md.
 */
module io.gpusync.bindings {
    exports io.gpusync.bindings.libc;
    exports io.gpusync.bindings.vulkan;
    exports io.gpusync.bindings.opencl;
    exports io.gpusync.bindings.egl;
    exports io.gpusync.bindings.gles;
    exports io.gpusync.bindings.cuda;
    exports io.gpusync.bindings.d3d12;
}
