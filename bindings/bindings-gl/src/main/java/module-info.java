/** EGL and OpenGL ES bindings (jextract). Only gpusync's own modules may read them; see bindings/README.md. */
module io.gpusync.bindings.gl {
    exports io.gpusync.bindings.egl to io.gpusync.gl, io.gpusync.test;
    exports io.gpusync.bindings.gles to io.gpusync.gl, io.gpusync.test;
}
