/** gpusync's linux backend: Linux sync files and eventfds. */
module io.gpusync.linux {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    requires io.gpusync.bindings.libc;
    exports io.gpusync.linux;
}
