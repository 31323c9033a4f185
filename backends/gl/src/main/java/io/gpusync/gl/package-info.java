/**
 * The OpenGL / EGL backend: waits on {@code GLsync} fences and on EGL syncs ({@code EGL_KHR_fence_sync},
 * {@code EGL_KHR_reusable_sync}) from any thread, over Panama FFM.
 *
 * <ul>
 *   <li>{@link io.gpusync.gl.GlShareGroup} — points over {@code GLsync}s of a producer context; waits borrow
 *       a pooled context shared with the producer (an {@code eglMakeCurrent} pair per call).</li>
 *   <li>{@link io.gpusync.gl.EglSyncs} — points over {@code EGLSync}s; waits need no GL context.</li>
 *   <li>{@link io.gpusync.gl.EglReusableSync} — a host-signalled EGL sync.</li>
 *   <li>{@link io.gpusync.gl.GlSemaphores} — {@link io.gpusync.SyncPoint.OpenGL} points over semaphores imported
 *       from Vulkan opaque fds ({@code GL_EXT_semaphore_fd}), awaited through a fence queued after
 *       {@code glWaitSemaphoreEXT}.</li>
 * </ul>
 *
 * Every point is a {@link io.gpusync.SyncPoint.OpenGLSync} with platform {@link io.gpusync.GlBackend#EGL};
 * every waiter is a {@link io.gpusync.spi.BlockingWaiter}. A wait parks in the driver in slices of at most 50 ms
 * (an interrupt is noticed between slices), except a fence wait on Mesa, which never sleeps inside the driver: it
 * makes zero-timeout queries between parks of up to 1 ms, because Mesa's CPU rasterisers keep fences in glibc
 * condition variables whose lost wake-ups can stall the rasteriser ({@code FenceWaits}; the system property
 * {@code io.gpusync.gl.fenceWaits=driver|probe} overrides the choice). Absent libraries ({@code libEGL.so.1}, {@code libGLESv2.so.2}) surface as
 * {@link io.gpusync.SyncNotSupportedException}.
 *
 * <p><b>Which threads make the EGL and GL calls.</b> A thread with an EGL context current (the application's) makes
 * them itself. Any other thread (an engine's pool thread, a housekeeping lane, a virtual thread's carrier) hands
 * them, one bounded call at a time, to gpusync's EGL threads ({@code gpusync-egl-N}, daemons, as many as the peak
 * number of concurrent calls), which never end: a thread that made EGL calls must not end while another thread of
 * the process may be in {@code vkDestroyDevice} (NVIDIA's EGL deadlocks the two; README, "Driver hazards"). The
 * waiters lend these threads to engines ({@code BlockingWaiter.waitThreads}): an engine's blocking wait runs
 * there whole and completes there, with no hand-off per slice.
 *
 * <p><b>Native boundary.</b> Every place where gpusync hands the driver something that may outlive the call, or
 * destroys what the driver may still use, and why the free comes after the driver's last use:
 * <table>
 *   <caption>OpenGL/EGL: what the driver keeps, who owns it, what keeps it alive</caption>
 *   <tr><th>site</th><th>what, and whose</th><th>why the free comes after the driver's last use</th></tr>
 *   <tr><td>owned {@code EGLSync}: a fence ({@link io.gpusync.gl.EglSyncs#adopt}) or a reusable sync
 *       ({@link io.gpusync.gl.EglReusableSync#create}, {@link io.gpusync.gl.EglReusableSync#adopt})</td>
 *       <td>gpusync</td><td>{@code eglDestroySyncKHR} when the anchor's last hold drops: every
 *       {@code eglClientWaitSyncKHR} and {@code eglGetSyncAttribKHR} runs under a claim; a reusable sync is also
 *       held by its {@code EglReusableSync} until that is closed, which covers {@code signal()} and the
 *       application's raw {@code eglSignalSyncKHR} calls made while it is open (Mesa writes to the sync after
 *       waking the waiters). {@code EglSyncs.adopt} refuses a reusable sync. A borrowed sync is the
 *       caller's</td></tr>
 *   <tr><td>owned {@code GLsync} ({@link io.gpusync.gl.GlShareGroup#adoptGlSync})
 *       </td><td>gpusync</td><td>{@code glDeleteSync} in a context of the group, on the housekeeping thread, after
 *       the last wait; it holds the group, so that context still exists</td></tr>
 *   <tr><td>pooled wait contexts ({@code ShareContexts})</td><td>gpusync</td><td>{@code eglDestroyContext} once
 *       the group is closed, no wait is in progress and every owned {@code GLsync} and semaphore object of the
 *       group has been deleted (each holds the group)</td></tr>
 *   <tr><td>GL semaphore object ({@link io.gpusync.gl.GlSemaphores#importFd}; the fd passes to GL on
 *       success)</td><td>gpusync</td><td>{@code glDeleteSemaphoresEXT} in a context of the group, on the
 *       housekeeping thread, once every waiter is closed; the object holds the group until then. The fence queued
 *       after its {@code glWaitSemaphoreEXT} is an owned {@code GLsync}</td></tr>
 *   <tr><td>driver strings ({@code eglQueryString}, {@code glGetString}, {@code glGetStringi})</td><td>the
 *       driver's</td><td>read while the display or context lives, with their exact length
 *       ({@code strlen}, then exactly that many bytes)</td></tr>
 *   <tr><td>attribute lists, out-parameters</td><td>confined arenas, per-thread scratch; a group's context
 *       attributes live as long as its {@code ShareContexts}</td><td>read during the call</td></tr>
 * </table>
 */
package io.gpusync.gl;
