package io.gpusync.gl;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.internal.NativeLibraries;
import io.gpusync.bindings.egl.Egl;

import java.lang.foreign.MemorySegment;
import io.gpusync.test.gl.EglProducer;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Opens real producers on Mesa's surfaceless EGL (llvmpipe); skips, with the reason, only if there is no driver. */
final class GlTestSupport {
    private GlTestSupport() {
    }

    static EglProducer producer() {
        return producer(256, 256);
    }

    static EglProducer producer(int width, int height) {
        assumeTrue(NativeLibraries.isAvailable("libEGL.so.1"), "libEGL.so.1 is not installed (apt: libegl1)");
        assumeTrue(NativeLibraries.isAvailable("libGLESv2.so.2"), "libGLESv2.so.2 is not installed (apt: libgles2)");
        try {
            return EglProducer.openSurfaceless(width, height);
        } catch (SyncNotSupportedException e) {
            assumeTrue(false, "no Mesa surfaceless EGL driver (apt: libegl-mesa0 libgl1-mesa-dri): " + e.getMessage());
            throw e;
        }
    }

    /** The calling thread's current EGL context (for the bound API). */
    static MemorySegment currentContext() {
        return Egl.eglGetCurrentContext();
    }
}
