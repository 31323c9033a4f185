/**
 * What gpusync's backends share and applications never call: the wait helpers ({@code io.gpusync.kit}: lifetime
 * anchors, wait and probe loops, deadlines) and the per-process internals ({@code io.gpusync.internal}). Both are
 * exported only to gpusync's own modules.
 */
module io.gpusync.backend.kit {
    requires transitive io.gpusync.api;
    exports io.gpusync.kit to
            io.gpusync.cpu, io.gpusync.cuda, io.gpusync.d3d11, io.gpusync.d3d12, io.gpusync.gl, io.gpusync.linux, io.gpusync.metal, io.gpusync.opencl, io.gpusync.vulkan, io.gpusync.wgpu, io.gpusync.reactor, io.gpusync.testsuite, io.gpusync.benchmarks;
    exports io.gpusync.internal to
            io.gpusync.cpu, io.gpusync.cuda, io.gpusync.d3d11, io.gpusync.d3d12, io.gpusync.gl, io.gpusync.linux, io.gpusync.metal, io.gpusync.opencl, io.gpusync.vulkan, io.gpusync.wgpu, io.gpusync.reactor, io.gpusync.testsuite, io.gpusync.benchmarks,
            io.gpusync.test, io.gpusync.examples;
}
