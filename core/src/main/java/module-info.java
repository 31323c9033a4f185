/** gpusync's contract ({@code io.gpusync}), its SPI ({@code io.gpusync.spi}) and its blocking Panama backends. */
module io.gpusync.core {
    // no exported signature names a binding type: the bindings stay an implementation detail
    requires io.gpusync.bindings.libc;
    requires io.gpusync.bindings.cuda;
    requires io.gpusync.bindings.vulkan;
    requires io.gpusync.bindings.opencl;
    requires io.gpusync.bindings.gl;
    requires io.gpusync.bindings.d3d12;
    exports io.gpusync;
    exports io.gpusync.spi;
    exports io.gpusync.cpu;
    exports io.gpusync.linux;
    exports io.gpusync.cuda;
    exports io.gpusync.gl;
    exports io.gpusync.opencl;
    exports io.gpusync.vulkan;
    exports io.gpusync.d3d11;
    exports io.gpusync.d3d12;
    exports io.gpusync.metal;
    exports io.gpusync.wgpu;
    // the per-process service object and housekeeping, for gpusync's own engine only
    exports io.gpusync.internal to io.gpusync.reactor;
}
