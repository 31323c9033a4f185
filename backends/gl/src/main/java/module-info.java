/** gpusync's gl backend: EGL/OpenGL ES fence syncs and GL semaphores. */
module io.gpusync.gl {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    requires io.gpusync.bindings.gl;
    exports io.gpusync.gl;
}
