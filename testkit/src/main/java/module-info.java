/**
 * gpusync's test kit for applications, like {@code reactor-test}: fake GPU queues on {@code CpuTimeline}
 * ({@code FakeGpuQueue}) and a GPU whose work takes virtual time on Reactor's {@code VirtualTimeScheduler}
 * ({@code VirtualGpu}), to test code that waits on GPU work without a GPU; and producers of real GPU work on
 * each backend ({@code io.gpusync.test.cuda}, {@code .vulkan}, {@code .opencl}, {@code .gl}, {@code .d3d12}) for
 * tests, demos and benchmarks, each needing only its backend and its bindings (exported to this module).
 */
module io.gpusync.test {
    requires transitive io.gpusync.api;
    requires transitive io.gpusync.cpu;
    requires transitive reactor.core;
    requires transitive reactor.test;
    // producers of real GPU work, one package per backend; a user reads the backends the user's project declares
    requires static io.gpusync.backend.kit; // CStrings: driver strings read to their terminator
    requires static io.gpusync.gl;
    requires static io.gpusync.bindings.gl;
    requires static io.gpusync.d3d12;
    requires static io.gpusync.bindings.d3d12;
    requires static io.gpusync.vulkan;
    requires static io.gpusync.bindings.vulkan;
    requires static io.gpusync.opencl;
    requires static io.gpusync.bindings.opencl;
    requires static io.gpusync.cuda;
    requires static io.gpusync.bindings.cuda;
    exports io.gpusync.test;
    exports io.gpusync.test.gl;
    exports io.gpusync.test.d3d12;
    exports io.gpusync.test.vulkan;
    exports io.gpusync.test.opencl;
    exports io.gpusync.test.cuda;
}
