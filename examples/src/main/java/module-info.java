/** The gpusync demo: a Reactor Netty HTTP service awaiting GPU work through gpusync on its own event loops. */
module io.gpusync.examples {
    requires io.gpusync.reactor;
    requires io.gpusync.cpu;
    requires io.gpusync.cuda;
    requires io.gpusync.d3d12;
    requires io.gpusync.opencl;
    requires io.gpusync.vulkan;
    requires io.gpusync.backend.kit; // CStrings: driver strings read to their terminator
    requires io.gpusync.test; // the producers of GPU work behind the device providers
    requires io.gpusync.bindings.opencl; // raw handles for the device providers and CUDA subjects
    requires io.gpusync.bindings.vulkan;
    requires io.gpusync.bindings.cuda; // the showcase's real CUDA work (copies, its own kernel)
    requires reactor.netty.core;
    requires reactor.netty.http;
    requires io.netty.codec.http;
    requires io.netty.transport;
    requires micrometer.core;
    requires micrometer.registry.prometheus;
    requires HdrHistogram;
    requires org.jfree.jfreechart;
    requires info.picocli;
    requires java.desktop;
    requires java.management; // the load report's CPU by thread group

    exports io.gpusync.examples;
    exports io.gpusync.examples.device;
    opens io.gpusync.examples to info.picocli;
}
