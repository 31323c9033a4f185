/** CUDA driver API bindings (jextract). Only gpusync's own modules may read them; see bindings/README.md. */
module io.gpusync.bindings.cuda {
    exports io.gpusync.bindings.cuda to io.gpusync.cuda, io.gpusync.test, io.gpusync.benchmarks, io.gpusync.examples;
}
