/** gpusync's opencl backend: OpenCL events and semaphores. */
module io.gpusync.opencl {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    requires io.gpusync.bindings.opencl;
    exports io.gpusync.opencl;
}
