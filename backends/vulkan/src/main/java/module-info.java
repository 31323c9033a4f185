/** gpusync's vulkan backend: Vulkan fences, binary and timeline semaphores, wait sets. */
module io.gpusync.vulkan {
    requires transitive io.gpusync.api;
    requires io.gpusync.backend.kit;
    requires io.gpusync.bindings.vulkan;
    exports io.gpusync.vulkan;
}
