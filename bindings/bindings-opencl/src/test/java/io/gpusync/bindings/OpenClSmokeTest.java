package io.gpusync.bindings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.bindings.opencl.clSetEventCallback$pfn_notify;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class OpenClSmokeTest {

    static boolean loaderPresent() {
        try {
            SymbolLookup.libraryLookup("libOpenCL.so.1", Arena.global());
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    @Test
    void platformsAndUserEventCallback() throws Exception {
        assumeTrue(loaderPresent(), "libOpenCL.so.1 not installed");
        try (Arena arena = Arena.ofShared()) {
            MemorySegment n = arena.allocate(ValueLayout.JAVA_INT);
            int r = OpenCl.clGetPlatformIDs(0, MemorySegment.NULL, n);
            assumeTrue(r != -1001, "no OpenCL platform (CL_PLATFORM_NOT_FOUND_KHR)");
            assertThat(r).isEqualTo(OpenCl.CL_SUCCESS());
            int count = n.get(ValueLayout.JAVA_INT, 0);
            assertThat(count).isPositive();
            MemorySegment platforms = arena.allocate(ValueLayout.ADDRESS, count);
            assertThat(OpenCl.clGetPlatformIDs(count, platforms, MemorySegment.NULL)).isEqualTo(OpenCl.CL_SUCCESS());
            MemorySegment platform = platforms.getAtIndex(ValueLayout.ADDRESS, 0);

            MemorySegment device = arena.allocate(ValueLayout.ADDRESS);
            assertThat(OpenCl.clGetDeviceIDs(platform, Integer.toUnsignedLong(OpenCl.CL_DEVICE_TYPE_ALL()), 1, device,
                    MemorySegment.NULL)).isEqualTo(OpenCl.CL_SUCCESS());
            MemorySegment err = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment ctx = OpenCl.clCreateContext(MemorySegment.NULL, 1, device, MemorySegment.NULL,
                    MemorySegment.NULL, err);
            assertThat(err.get(ValueLayout.JAVA_INT, 0)).isEqualTo(OpenCl.CL_SUCCESS());
            try {
                MemorySegment ev = OpenCl.clCreateUserEvent(ctx, err);
                assertThat(err.get(ValueLayout.JAVA_INT, 0)).isEqualTo(OpenCl.CL_SUCCESS());
                CompletableFuture<Integer> fired = new CompletableFuture<>();
                MemorySegment cb = clSetEventCallback$pfn_notify.allocate(
                        (event, status, userData) -> fired.complete(status), arena);
                assertThat(OpenCl.clSetEventCallback(ev, OpenCl.CL_COMPLETE(), cb, MemorySegment.NULL))
                        .isEqualTo(OpenCl.CL_SUCCESS());
                assertThat(OpenCl.clSetUserEventStatus(ev, OpenCl.CL_COMPLETE())).isEqualTo(OpenCl.CL_SUCCESS());
                assertThat(fired.get(10, TimeUnit.SECONDS)).isEqualTo(OpenCl.CL_COMPLETE());
                OpenCl.clReleaseEvent(ev);
            } finally {
                OpenCl.clReleaseContext(ctx);
            }
        }
    }
}
