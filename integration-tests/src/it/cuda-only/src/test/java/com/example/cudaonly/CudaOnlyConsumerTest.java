package com.example.cudaonly;

import io.gpusync.SyncPoint;
import io.gpusync.cuda.CudaEvents;
import io.gpusync.reactor.GpuSync;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.function.BiFunction;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A consumer with the BOM, gpusync-cuda and the engine: it compiles against both, and sees no other backend. */
class CudaOnlyConsumerTest {

    @Test
    void cudaAndTheEngineAreThereAndNoOtherBackendIs() {
        BiFunction<Long, Long, SyncPoint.CudaEvent> borrow = CudaEvents::borrow; // compiles against gpusync-cuda
        assertNotNull(borrow);
        assertNotNull(GpuSync.class);
        for (String absent : List.of("io.gpusync.vulkan.VulkanDevice", "io.gpusync.gl.EglSyncs",
                "io.gpusync.opencl.OpenClEvents", "io.gpusync.d3d12.D3D12Fences", "io.gpusync.cpu.CpuTimeline",
                "io.gpusync.bindings.vulkan.Vulkan", "io.gpusync.bindings.opencl.OpenCl")) {
            assertThrows(ClassNotFoundException.class, () -> Class.forName(absent), absent);
        }
    }
}
