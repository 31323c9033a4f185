/** gpusync's cpu backend: CPU timelines: software sync points signalled from Java. */
module io.gpusync.cpu {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    exports io.gpusync.cpu;
}
