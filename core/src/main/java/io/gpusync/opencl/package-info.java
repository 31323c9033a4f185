/**
 * The OpenCL backend: {@code cl_event} waits over PoCL or any OpenCL 1.1+ driver, through Panama.
 *
 * <ul>
 *   <li>{@link io.gpusync.opencl.OpenClEvents} — points over events an application holds (raw handles as
 *       {@code MemorySegment} or {@code long}), owned or borrowed;</li>
 *   <li>{@code OpenClEventWaiter} — probe ({@code clGetEventInfo}), callback
 *       ({@code clSetEventCallback}, one process-wide upcall stub), blocking ({@code clWaitForEvents}) and
 *       timed parked waits;</li>
 *   <li>{@link io.gpusync.opencl.OpenClProducers.OpenClUserEvent} — a host-controlled event (complete or fail);</li>
 *   <li>{@link io.gpusync.opencl.OpenClProducers.OpenClContext} — a small owned context/queue that enqueues real kernels
 *       and markers, for tests, demos and benchmarks.</li>
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
 * references the application keeps. {@code OpenClUserEvent.close()} fails a user event whose status was never set
 * ({@code OpenClUserEvent.CLOSED_UNSET}), so nothing waits on it for ever.
 */
package io.gpusync.opencl;
