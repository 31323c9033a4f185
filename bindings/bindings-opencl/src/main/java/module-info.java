/** OpenCL bindings (jextract). Only gpusync's own modules may read them; see bindings/README.md. */
module io.gpusync.bindings.opencl {
    exports io.gpusync.bindings.opencl to io.gpusync.opencl, io.gpusync.test, io.gpusync.examples;
}
