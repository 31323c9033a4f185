/** gpusync's cuda backend: CUDA events and streams (the CUDA driver API). */
module io.gpusync.cuda {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    requires io.gpusync.bindings.cuda;
    exports io.gpusync.cuda;
}
