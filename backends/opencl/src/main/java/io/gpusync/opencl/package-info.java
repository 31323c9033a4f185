/**
 * The OpenCL backend: {@code cl_event} waits over PoCL or any OpenCL 1.1+ driver, through Panama.
 *
 * <ul>
 *   <li>{@link io.gpusync.opencl.OpenClEvents} — points over events an application holds (raw handles as
 *       {@code MemorySegment} or {@code long}), owned or borrowed;</li>
 *   <li>{@code OpenClEventWaiter} — probe ({@code clGetEventInfo}), callback
 *       ({@code clSetEventCallback}, one process-wide upcall stub), blocking ({@code clWaitForEvents}) and
 *       timed parked waits;</li>
 *   <li>{@link io.gpusync.opencl.OpenClQueue} — enqueues the application's commands after gpusync points and
 *       returns their events as points, knowing what each command waits on;</li>
 *   <li>{@link io.gpusync.opencl.OpenClEvents#setUserEventStatus} — sets a user event's status, one change at a
 *       time.</li>
 * </ul>
 * {@link io.gpusync.opencl.OpenClSemaphores} — binary {@code cl_semaphore_khr} points (extension
 * {@code cl_khr_semaphore}, where the device has it; PoCL 3.1 does not): the CPU waits on a
 * {@code clEnqueueWaitSemaphoresKHR} command's event. No {@link io.gpusync.SyncPoint.OpenCl} point carries a value.
 *
 * <p><b>Releases.</b> gpusync never releases its last reference to an event while the driver may still touch it (PoCL
 * 3.1 aborts the process when an event notifies a dependent command that failed and was freed meanwhile): a user event
 * or a completed command goes at once, a pending command is held until it terminates, a failed one until every event
 * it waits on has terminated and the driver is done with it. Closing a point is safe at any time.
 * {@link io.gpusync.opencl.OpenClEvents} says what that costs for events gpusync did not enqueue, and what is safe for
 * references the application keeps. The producers of OpenCL work for tests, benchmarks and demos live in the test kit
 * ({@code gpusync-test}: {@code io.gpusync.test.opencl}).
 *
 * <p><b>Native boundary.</b> Every place where gpusync hands the driver something that may outlive the call, or
 * releases what the driver may still use, and why the release comes after the driver's last use:
 * <table>
 *   <caption>OpenCL: what the driver keeps, who owns it, what keeps it alive</caption>
 *   <tr><th>site</th><th>what, and whose</th><th>why the free comes after the driver's last use</th></tr>
 *   <tr><td>{@code clSetEventCallback} ({@code ClCallbacks.register})</td><td>the one {@code pfn_notify} upcall
 *       stub of the process; gpusync's, in {@code Arena.global()}</td><td>never freed: OpenCL cannot unregister a
 *       callback</td></tr>
 *   <tr><td>its {@code user_data}</td><td>a {@code long} key of an {@code UpcallRegistry}, not a pointer</td>
 *       <td>nothing to free: a callback whose registration was cancelled finds nothing and returns</td></tr>
 *   <tr><td>{@code cl_event} references ({@link io.gpusync.opencl.OpenClEvents#adopt}; {@code borrow} takes a
 *       {@code clRetainEvent} of its own; {@link io.gpusync.opencl.OpenClQueue} commands)</td><td>gpusync's
 *       reference</td><td>{@code clReleaseEvent}
 *       when the anchor's last hold drops (for a command not yet terminated, held back by {@code ClEventRelease}
 *       as the paragraph above says): every pending callback registration holds a claim until it completes
 *       or is cancelled, the sweep probes under one, waits ({@code clWaitForEvents}) and probes hold one, and
 *       {@code ClEventRelease} probes an event of a wait list it did not retain only under that event's reference's
 *       monitor while gpusync still holds it. A
 *       callback the driver still has after its registration was cancelled gets the event from the driver, which
 *       keeps it until its callbacks have run</td></tr>
 *   <tr><td>wait lists of {@code OpenClQueue} enqueues</td><td>the listed events' owners</td><td>entered for
 *       the call, the list read during it; the driver keeps its own dependency (OpenCL deletes an event only once
 *       no enqueued command waits for it; PoCL 3.1 breaks this for a failed user event)</td></tr>
 *   <tr><td>{@code cl_semaphore_khr} ({@link io.gpusync.opencl.OpenClSemaphores#waitOn})</td><td>a
 *       {@code clRetainSemaphoreKHR} of gpusync's</td><td>{@code clReleaseSemaphoreKHR} once the waiter is closed;
 *       OpenCL keeps a semaphore that enqueued commands still use</td></tr>
 *   <tr><td>{@code clSetUserEventStatus} ({@code OpenClEvents.setUserEventStatus})</td><td>the caller's user
 *       event</td><td>counted as in flight on gpusync's references to it, so gpusync's release of a command that
 *       waits on it never comes during the call; a failing one runs with no enqueue of {@code OpenClQueue} in
 *       flight (PoCL 3.1 frees commands of the queue under both otherwise)</td></tr>
 * </table>
 */
package io.gpusync.opencl;
