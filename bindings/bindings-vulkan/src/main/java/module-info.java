/** Vulkan bindings (jextract). Only gpusync's own modules may read them; see bindings/README.md. */
module io.gpusync.bindings.vulkan {
    exports io.gpusync.bindings.vulkan to io.gpusync.vulkan, io.gpusync.test, io.gpusync.examples;
}
