package io.gpusync.bindings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpusync.bindings.cuda.CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC;
import io.gpusync.bindings.cuda.CUhostFn;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.bindings.egl.Egl;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import org.junit.jupiter.api.Test;

/** Documents (and checks) the loading behaviour described in bindings/README.md. */
class LibraryLoadingTest {

    static boolean present(String lib) {
        try {
            SymbolLookup.libraryLookup(lib, Arena.global());
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    @Test
    void structAndCallbackClassesDoNotLoadTheLibrary() {
        // struct layouts and upcall stubs only touch Cuda$shared, never the Cuda header class
        assertThat(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC.sizeof()).isPositive();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment stub = CUhostFn.allocate(userData -> { }, arena);
            assertThat(stub.address()).isNotZero();
        }
    }

    @Test
    void headerClassFailsInItsInitializerWithoutTheLibrary() {
        assumeTrue(!present("libcuda.so.1"), "libcuda.so.1 is installed here");
        // even a constant accessor initializes the header class, whose initializer calls libraryLookup
        assertThatThrownBy(Cuda::CUDA_SUCCESS)
                .isInstanceOf(ExceptionInInitializerError.class)
                .cause().isInstanceOf(IllegalArgumentException.class);
        // every later use of the class: NoClassDefFoundError
        assertThatThrownBy(Cuda::cuInit$descriptor).isInstanceOf(NoClassDefFoundError.class);
    }

    @Test
    void eglClientExtensions() {
        assumeTrue(present("libEGL.so.1"), "libEGL.so.1 not installed");
        MemorySegment s = Egl.eglQueryString(Egl.EGL_NO_DISPLAY(), Egl.EGL_EXTENSIONS());
        // client extensions (EGL 1.5 / EGL_EXT_client_extensions); NULL only on very old EGL
        assumeTrue(!s.equals(MemorySegment.NULL), "no EGL client extensions");
        assertThat(s.getString(0)).contains("EGL_");
    }
}
