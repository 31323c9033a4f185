package io.gpusync.gl;

import io.gpusync.bindings.egl.Egl;
import io.gpusync.internal.CStrings;

import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * How the waiters of one display wait on a fence (an EGL fence sync or a {@code GLsync}): inside the driver's timed
 * wait, in slices, or by zero-timeout queries with a backoff between them ({@code ProbeLoop}), so that no gpusync
 * thread ever sleeps inside the driver.
 *
 * <p><b>Why probe on Mesa.</b> Mesa's CPU rasterisers (llvmpipe, softpipe) keep each fence in a glibc condition
 * variable: a timed wait sleeps on it, and the rasteriser broadcasts it when the scene is done. glibc's condition
 * variable before 2.41 has a known lost wake-up when waiters that time out race a signal (sourceware bug 25847), and
 * under many such timed waits llvmpipe's rasteriser was seen asleep inside {@code pthread_cond_broadcast}, waiting
 * for the fence's waiters, with every GL call of the process behind it (README, "Driver hazards"). A zero-timeout
 * query reads the fence's counter without touching the condition variable. An EGL display does not
 * say which Mesa driver serves it (that needs {@code EGL_MESA_query_driver}), so every Mesa display probes; a
 * hardware Mesa driver pays a zero-timeout fence query per probe. Reusable syncs are not fences: Mesa reads even
 * their status through a timed wait, so they keep their sliced waits.
 *
 * <p>The system property {@value #PROPERTY} overrides the choice for the process: {@code driver} or {@code probe};
 * anything else, or nothing, is {@code auto} (probe on Mesa, driver waits elsewhere).
 *
 * <p>Threading: stateless; {@link #of} makes one {@code eglQueryString} call and must run where EGL calls may be
 * made ({@link EglThreads}).
 */
enum FenceWaits {
    /** Timed waits inside the driver ({@code eglClientWaitSyncKHR}, {@code glClientWaitSync}), in slices. */
    IN_DRIVER,
    /** Zero-timeout driver queries between parks that back off to 1 ms. */
    PROBED;

    /** The system property that overrides the choice: {@code driver}, {@code probe} or {@code auto}. */
    static final String PROPERTY = "io.gpusync.gl.fenceWaits";

    /** The choice for fences of {@code display} (an initialised EGL display). */
    static FenceWaits of(MemorySegment display) {
        return of(display, System.getProperty(PROPERTY, "auto"));
    }

    /** The choice for fences of {@code display} under the property value {@code choice}. */
    static FenceWaits of(MemorySegment display, String choice) {
        return switch (choice.toLowerCase(Locale.ROOT)) {
            case "driver" -> IN_DRIVER;
            case "probe" -> PROBED;
            default -> isMesa(display) ? PROBED : IN_DRIVER;
        };
    }

    private static boolean isMesa(MemorySegment display) {
        MemorySegment vendor = Egl.eglQueryString(display, Egl.EGL_VENDOR());
        return !vendor.equals(MemorySegment.NULL) && CStrings.read(vendor).contains("Mesa");
    }
}
