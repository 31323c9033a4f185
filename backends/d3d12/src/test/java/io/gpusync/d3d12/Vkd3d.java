package io.gpusync.d3d12;

import io.gpusync.test.d3d12.D3D12Device;
import io.gpusync.SyncNotSupportedException;
import org.junit.jupiter.api.Assumptions;

import java.lang.foreign.MemorySegment;

/**
 * Test support: a real D3D12 device through vkd3d on lavapipe (Surefire pins the ICD with {@code VK_DRIVER_FILES}).
 * Tests skip, printing the reason, only where D3D12 is not available at all (the shim was not built: no C compiler
 * or no libvkd3d-dev; libvkd3d1 missing; no Vulkan driver).
 */
final class Vkd3d {
    private Vkd3d() {
    }

    /** A fresh device; the test closes it. */
    static D3D12Device device() {
        try {
            return D3D12Device.open();
        } catch (SyncNotSupportedException e) {
            System.out.println("[skipped] D3D12 through vkd3d is not available: " + e.getMessage());
            Assumptions.assumeTrue(false, "D3D12 through vkd3d is not available: " + e.getMessage());
            throw e;
        }
    }

    /** The fence's reference count now (an AddRef/Release pair on the real object). */
    static int refCount(MemorySegment fence) {
        D3d12Native d3d12 = D3d12Native.platform();
        d3d12.addRef(fence);
        return d3d12.release(fence);
    }
}
