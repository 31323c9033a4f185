/**
 * Benchmarks and harnesses comparing gpusync with the alternatives. The harness and JMH run on the class
 * path (see benchmarks/README.md); this descriptor still compiles and states what the module needs.
 */
module io.gpusync.benchmarks {
    requires io.gpusync.reactor;
    requires io.gpusync.backend.kit; // PathWaiters builds test waiters with the backends' helpers
    requires io.gpusync.cpu;
    requires io.gpusync.cuda;
    requires io.gpusync.d3d12;
    requires io.gpusync.gl;
    requires io.gpusync.linux;
    requires io.gpusync.opencl;
    requires io.gpusync.vulkan;
    requires io.gpusync.test; // the producers of GPU work (io.gpusync.test.gl, …)
    requires io.gpusync.bindings.cuda; // raw handles for the device providers and CUDA subjects
    requires io.gpusync.bindings.d3d12;
    requires io.gpusync.bindings.libc;
    requires java.management;
    requires jdk.management;
    requires java.desktop;
    requires jmh.core;
    requires micrometer.observation; // ObservationOverheadBenchmark
    requires micrometer.core;
    requires micrometer.commons;
    requires HdrHistogram;
    requires org.jfree.jfreechart;

    exports io.gpusync.benchmarks.subjects;
    exports io.gpusync.benchmarks.harness;
    exports io.gpusync.benchmarks.jmh;
    exports io.gpusync.benchmarks.cuda;
    exports io.gpusync.benchmarks.backends;
    exports io.gpusync.benchmarks.timers;
}
