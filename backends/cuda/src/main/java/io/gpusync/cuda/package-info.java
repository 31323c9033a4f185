/**
 * The CUDA backend over the driver API: {@link io.gpusync.cuda.CudaEvents} ({@code CUevent} points),
 * {@link io.gpusync.cuda.CudaHostTimeline} (a 64-bit word of pinned, device-mapped host memory that streams raise;
 * waiting is a memory read), {@link io.gpusync.cuda.CudaExternalSemaphore} (Vulkan interop on streams) and
 * {@link io.gpusync.cuda.CudaPointOwner} (points that end together). The producer of CUDA work for tests, benchmarks
 * and demos is the test kit's {@code io.gpusync.test.cuda.CudaWorkQueue} ({@code gpusync-test}).
 *
 * <p><b>Waiting.</b> Probes are one {@code cuEventQuery} or one acquire read of the word. Past a 50 µs spin, waits
 * sit behind CUDA stream callbacks ({@code cuStreamAddCallback}): one per event outstanding, shared by every wait
 * on it, armed on a private stream behind the event; for a timeline, one per covered value. Events recorded in
 * their stream's order ({@link io.gpusync.cuda.CudaPointOwner#recordOrderedEvent}, as the test kit's
 * {@code CudaWorkQueue} does) share one callback per stream, behind the oldest
 * waited-on event: when it runs, the {@code gpusync-cuda-sweeper} thread finds the newest finished event of the
 * stream by a binary search of probes and completes every wait up to it in one pass, again and again while a burst
 * keeps completing ({@code StreamOrder}). An engine's probe of such an event asks the order first: an event at or
 * before the newest known complete one is complete, and one recorded after an event found incomplete within the last
 * 2 µs is incomplete, both without a driver call. <b>Faults.</b> Unlike a
 * {@code cuLaunchHostFunc} host function, which is never run on a context with a sticky error, a stream callback
 * is called with the error (behind other streams' kernels, closed host gates and event waits alike); a trap may
 * poison the other contexts of the process too. The callback hands the error to the
 * <b>fault watch</b> (one daemon thread, {@code gpusync-cuda-fault-watch}), which checks each context with waits
 * ({@code cuStreamQuery(NULL)}, context pushed) and fails all of a faulted context's waits — engine and blocking,
 * events, timeline values and external semaphores, {@code FOREVER} included — with
 * {@link io.gpusync.DeviceLostException}. The watch also re-queries, every 1 → 25 ms, a context whose waits are
 * all deferred for want of callback room (no callback of its own in flight to report a fault), and every other
 * context with waits once a second as a backstop; with no waits it never wakes. Closing a
 * {@link io.gpusync.cuda.CudaPointOwner} fails the waits on its points with
 * {@link io.gpusync.SyncCancelledException} at once.
 *
 * <p><b>Driver calls per path.</b> No device-synchronizing call ({@code cuMemFreeHost}, {@code cuMemHostAlloc},
 * {@code cuCtxSynchronize}, {@code cuStreamSynchronize}, {@code cuModuleUnload}, …) is reachable from a wait's
 * completion, cancel, timeout, GC release or an engine's {@code dispose()}: they would stall every CUDA call of the
 * process until the device drains, forever behind a stream blocked on a host gate.
 * <table>
 *   <caption>CUDA driver calls made on each path</caption>
 *   <tr><th>path</th><th>driver calls</th></tr>
 *   <tr><td>probe ({@code isSignaled}, engine spin)</td><td>event: {@code cuEventQuery} (+ push/pop of its
 *       context on {@code CUDA_ERROR_INVALID_CONTEXT}), or none when its stream's order answers; timeline: none (a memory read), at most once per ms
 *       {@code cuCtxPushCurrent_v2} + {@code cuStreamQuery(NULL)} + {@code cuCtxPopCurrent_v2}</td></tr>
 *   <tr><td>hand-over past the spin (engine {@code onSignal}, blocking {@code await} arming)</td><td>push;
 *       {@code cuStreamCreate(NON_BLOCKING)}, {@code cuStreamWaitEvent}, {@code cuStreamAddCallback},
 *       {@code cuStreamDestroy_v2} (returns at once, the stream is freed when its work is done); pop — only if no
 *       callback is outstanding for the event or value; a timeline value not yet covered may also need
 *       {@code cuEventCreate} + {@code cuEventRecord} + {@code cuEventDestroy_v2}. At most 32 such callbacks
 *       are outstanding in the process (past a few dozen the driver blocks the launch until the device drains;
 *       see {@code StreamCallbackBudget}); beyond that the arm is deferred — no call on the waiting thread — and the
 *       {@code gpusync-cuda-armer} thread arms it when room frees, probing it meanwhile ({@code cuEventQuery}, or a
 *       read of the timeline word) 20 µs after it was deferred and then half its age after each probe (at most ≈ 1 s), each entry on
 *       its own schedule, so none is starved by older ones. Destroying a context ({@code cuCtxDestroy}) while
 *       gpusync still holds points in it is the caller's bug that gpusync cannot detect: the next push of the dead
 *       handle may abort the process inside the driver ({@code free(): invalid pointer}); the primary
 *       contexts gpusync retains itself are not exposed to it</td></tr>
 *   <tr><td>completion (stream callback, on a driver thread)</td><td>none (hands over only; with an error status,
 *       queues it for the fault watch)</td></tr>
 *   <tr><td>sweep of an owned stream's events ({@code gpusync-cuda-sweeper}, after its callback ran)</td><td>
 *       {@code cuEventQuery} of O(log n) of the stream's n waited-on events; the next callback's arm as above;
 *       for a deferred timeline cover of the same context, a read of its word</td></tr>
 *   <tr><td>cancel, timeout, engine {@code dispose()}</td><td>none: the registration's key is removed; the
 *       callback, which cannot be withdrawn, finds nothing when it runs</td></tr>
 *   <tr><td>fault watch</td><td>push, {@code cuStreamQuery(NULL)}, pop per context with waits: after a callback
 *       reported an error, every 1 → 25 ms for a context whose waits are all deferred, once a second for the
 *       others</td></tr>
 *   <tr><td>release of an event point (close or GC of its last waiter)</td><td>owned event: push,
 *       {@code cuEventDestroy_v2} (returns at once for a recorded event), pop; nothing if the push fails (the
 *       context is gone, and its events with it); borrowed: none</td></tr>
 *   <tr><td>release of a timeline</td><td>push, {@code cuEventDestroy_v2} of its order and mark events, pop; the
 *       word returns to a pool (no call), through a reaper thread that only reads memory if a write to it is
 *       still in flight</td></tr>
 *   <tr><td>timeline creation</td><td>{@code cuCtxGetDevice}, {@code cuDeviceGetAttribute},
 *       {@code cuMemHostGetDevicePointer_v2}; {@code cuDevicePrimaryCtxRetain} and {@code cuMemHostAlloc} of a
 *       4 KiB slab only when the device's pool is empty (once per 512 timelines)</td></tr>
 *   <tr><td>{@code CudaPointOwner.close()}</td><td>fails pending waits (no call)</td></tr>
 * </table>
 *
 * <p><b>Native boundary.</b> Every place where gpusync hands the driver something that may outlive the call, or
 * destroys what the driver may still use, and why the free comes after the driver's last use:
 * <table>
 *   <caption>CUDA: what the driver keeps, who owns it, what keeps it alive</caption>
 *   <tr><th>site</th><th>what, and whose</th><th>why the free comes after the driver's last use</th></tr>
 *   <tr><td>{@code cuStreamAddCallback} ({@code StreamCallbacks.launch})</td><td>the one
 *       {@code CUstreamCallback} upcall stub of the process; gpusync's, in {@code Arena.global()}</td>
 *       <td>never freed: a launched callback cannot be withdrawn, so the code it calls lives as long as the
 *       process</td></tr>
 *   <tr><td>its {@code userData}</td><td>a {@code long} key of an {@code UpcallRegistry}, not a pointer</td>
 *       <td>nothing to free: a callback whose key was cancelled or failed finds nothing and returns</td></tr>
 *   <tr><td>private stream of {@code StreamCallbacks.launchAfterEvent}</td><td>{@code cuStreamCreate}d by
 *       gpusync, carries a {@code cuStreamWaitEvent} and the callback</td><td>{@code cuStreamDestroy_v2} right after
 *       the launch: CUDA keeps a destroyed stream until its pending work (the wait, the callback) has run</td></tr>
 *   <tr><td>events given to {@code cuStreamWaitEvent} (private streams, a timeline's order event,
 *       {@code waitOnForeignStream})</td><td>the event's owner</td><td>the wait takes the event's state at the
 *       call; the call runs under the waiter's claim, and destroying the event afterwards is allowed</td></tr>
 *   <tr><td>owned {@code CUevent} ({@link io.gpusync.cuda.CudaEvents#adopt}, {@code record},
 *       {@code CudaPointOwner.recordEvent})</td><td>gpusync</td><td>{@code cuEventDestroy_v2} (context pushed) when
 *       the {@code NativeAnchor}'s last hold drops: probes, waits and armed callbacks hold claims, and a deferred
 *       arm holds the waiter's ({@code EventWakeup}); an event still recorded may be destroyed (the driver frees it
 *       on completion). A borrowed event is the caller's</td></tr>
 *   <tr><td>timeline word written by {@code cuStreamWriteValue64_v2} ({@link io.gpusync.cuda.CudaHostTimeline})
 *       </td><td>8 bytes of a {@code PinnedWordPool} slab ({@code cuMemHostAlloc(DEVICEMAP | PORTABLE)} in the
 *       device's primary context, which the pool retains); gpusync's</td><td>slabs are never freed; a word goes
 *       back to the pool only after its timeline's anchor is released <em>and</em> it shows the last value
 *       advanced ({@code TimelineState.release}, else {@code PinnedReaper} waits for the write); a word whose
 *       context failed with a write pending is never reused. A GPU wait of the application's
 *       ({@code cuStreamWaitValue64} on the point's address) is the application's: keep the timeline or a waiter
 *       open until it has completed (a recycled word is zeroed)</td></tr>
 *   <tr><td>timeline order and mark events</td><td>gpusync</td><td>destroyed by {@code TimelineState.release}
 *       after its callback keys are cancelled; streams already waiting on them are unaffected</td></tr>
 *   <tr><td>{@code CUexternalSemaphore} ({@link io.gpusync.cuda.CudaExternalSemaphore}; the fd passes to the
 *       driver on a successful import)</td><td>gpusync</td><td>{@code cuDestroyExternalSemaphore} once the object
 *       and every point's waiter are closed, no call on it is in progress, and no {@code waitAsync} or point wait
 *       gpusync enqueued in the context is still pending (each records an event after itself; {@code GatedWaits}
 *       destroys on the housekeeping thread once they have passed: the destroy would otherwise hold the driver's
 *       lock until they do); {@code whenReleased()} says when, so the exporting API destroys its own semaphore only
 *       afterwards. <b>Not covered:</b> a {@code signalAsync} still pending, and waits the application enqueued with
 *       its own calls: keep the object open until the streams have passed them</td></tr>
 *   <tr><td>parameter arrays ({@code cuLaunchKernel}, {@code cu*ExternalSemaphoresAsync}), out-pointers</td>
 *       <td>confined arenas</td><td>read during the call only (kernel parameters are copied at launch)</td></tr>
 *   <tr><td>primary contexts</td><td>{@code cuDevicePrimaryCtxRetain} by {@code PinnedWordPool}</td><td>never
 *       released (its slabs live in it). An application that retains a context for its points releases it in
 *       their {@code afterRelease} actions ({@link io.gpusync.cuda.CudaPointOwner})</td></tr>
 * </table>
 *
 * <p><b>Errors.</b> Every {@code CUresult} maps to an {@link io.gpusync.ErrorKind} and an exception.
 * <b>Classification</b> (what a failed driver call becomes), reviewed against every code of the CUDA 13.0 {@code CUresult}
 * list; codes not named below (and codes newer than the header) are {@link io.gpusync.ErrorKind#CONFIGURATION}:
 * <table>
 *   <caption>CUresult → ErrorKind, exception</caption>
 *   <tr><th>codes</th><th>kind</th><th>exception</th><th>why</th></tr>
 *   <tr><td>214 ECC_UNCORRECTABLE, 220 NVLINK_UNCORRECTABLE, 226 CONTAINED, 700 ILLEGAL_ADDRESS,
 *       702 LAUNCH_TIMEOUT, 710 ASSERT, 714 HARDWARE_STACK_ERROR, 715 ILLEGAL_INSTRUCTION,
 *       716 MISALIGNED_ADDRESS, 717 INVALID_ADDRESS_SPACE, 718 INVALID_PC, 719 LAUNCH_FAILED,
 *       721 TENSOR_MEMORY_LEAK, 810 MPS_CLIENT_TERMINATED, 911 EXTERNAL_DEVICE, 916 KEY_ROTATION</td>
 *       <td>FATAL</td><td>{@link io.gpusync.DeviceLostException} (cause: {@link io.gpusync.SyncBackendException} with the code)</td>
 *       <td>sticky: the context is unusable, every later call in it fails (with a primary context: the device,
 *       for the whole process)</td></tr>
 *   <tr><td>4 DEINITIALIZED, 709 CONTEXT_IS_DESTROYED, 999 UNKNOWN</td><td>FATAL</td>
 *       <td>{@link io.gpusync.DeviceLostException}</td><td>the context or driver is gone, or in an internal state the
 *       driver itself cannot name: no wait in it can complete</td></tr>
 *   <tr><td>201 INVALID_CONTEXT <em>for a context gpusync already holds</em> (package-private {@code contextGone})</td>
 *       <td>FATAL</td><td>{@link io.gpusync.DeviceLostException}</td><td>the context behind a pending wait was destroyed;
 *       for a context a caller passes in, 201 stays CONFIGURATION</td></tr>
 *   <tr><td>34 STUB_LIBRARY, 36 CALL_REQUIRES_NEWER_DRIVER, 100 NO_DEVICE, 102 DEVICE_NOT_LICENSED,
 *       209 NO_BINARY_FOR_GPU, 217 PEER_ACCESS_UNSUPPORTED, 221 JIT_COMPILER_NOT_FOUND,
 *       222 UNSUPPORTED_PTX_VERSION, 223 JIT_COMPILATION_DISABLED, 224 UNSUPPORTED_EXEC_AFFINITY,
 *       225 UNSUPPORTED_DEVSIDE_SYNC, 801 NOT_SUPPORTED, 802 SYSTEM_NOT_READY, 803 SYSTEM_DRIVER_MISMATCH,
 *       804 COMPAT_NOT_SUPPORTED_ON_DEVICE, 811 CDP_NOT_SUPPORTED, 812 CDP_VERSION_MISMATCH</td>
 *       <td>CONFIGURATION</td><td>{@link io.gpusync.SyncNotSupportedException}</td><td>this machine, driver or device
 *       cannot do it</td></tr>
 *   <tr><td>2 OUT_OF_MEMORY, 46 DEVICE_UNAVAILABLE, 600 NOT_READY, 701 LAUNCH_OUT_OF_RESOURCES,
 *       805 MPS_CONNECTION_FAILED, 806 MPS_RPC_FAILURE, 807 MPS_SERVER_NOT_READY, 808 MPS_MAX_CLIENTS_REACHED,
 *       809 MPS_MAX_CONNECTIONS_REACHED, 909 TIMEOUT</td><td>RECOVERABLE</td><td>{@link io.gpusync.SyncBackendException}</td>
 *       <td>transient: the same call may succeed later</td></tr>
 *   <tr><td>everything else (1 INVALID_VALUE, 101 INVALID_DEVICE, 201 INVALID_CONTEXT, 400 INVALID_HANDLE,
 *       401 ILLEGAL_STATE, 800 NOT_PERMITTED, 9xx stream capture, …)</td><td>CONFIGURATION</td>
 *       <td>{@link io.gpusync.SyncBackendException}</td><td>the request is wrong</td></tr>
 * </table>
 */
package io.gpusync.cuda;

