/**
 * The OpenGL / EGL backend: waits on {@code GLsync} fences and on EGL syncs ({@code EGL_KHR_fence_sync},
 * {@code EGL_KHR_reusable_sync}) from any thread, over Panama FFM.
 *
 * <ul>
 *   <li>{@link io.gpusync.gl.GlShareGroup} — points over {@code GLsync}s of a producer context; waits borrow
 *       a pooled context shared with the producer (an {@code eglMakeCurrent} pair per call).</li>
 *   <li>{@link io.gpusync.gl.EglSyncs} — points over {@code EGLSync}s; waits need no GL context.</li>
 *   <li>{@link io.gpusync.gl.EglReusableSync} — a host-signalled EGL sync.</li>
 *   <li>{@link io.gpusync.gl.GlProducers.EglProducer} — an owned surfaceless GLES 3 producer for demos and benchmarks.</li>
 *   <li>{@link io.gpusync.gl.GlSemaphores} — {@link io.gpusync.SyncPoint.OpenGL} points over semaphores imported
 *       from Vulkan opaque fds ({@code GL_EXT_semaphore_fd}), awaited through a fence queued after
 *       {@code glWaitSemaphoreEXT}.</li>
 * </ul>
 *
 * Every point is a {@link io.gpusync.SyncPoint.OpenGLSync} with platform {@link io.gpusync.GlBackend#EGL};
 * every waiter is a {@link io.gpusync.spi.BlockingWaiter} (it parks in the driver: a futex on Mesa).
 * Blocking waits cannot be interrupted once inside the driver; use short timeouts or the reactor adapter to
 * cancel. Absent libraries ({@code libEGL.so.1}, {@code libGLESv2.so.2}) surface as
 * {@link io.gpusync.SyncNotSupportedException}.
 */
package io.gpusync.gl;
