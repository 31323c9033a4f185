/**
 * The CUDA backend over the driver API: {@link io.gpusync.cuda.CudaEvents} ({@code CUevent} points),
 * {@link io.gpusync.cuda.CudaHostTimeline} (a 64-bit word of pinned, device-mapped host memory that streams raise;
 * waiting is a memory read), {@link io.gpusync.cuda.CudaExternalSemaphore} (Vulkan interop on streams) and
 * {@link io.gpusync.cuda.CudaWorkQueue} (a small owned producer for demos, benchmarks and tests).
 *
 * <p><b>Waiting.</b> Probes are one {@code cuEventQuery} (≈1.5 µs on the H200) or one acquire read of the word
 * (≈1 ns). Past a 50 µs spin, waits sit behind CUDA host functions: one per event outstanding, shared by every
 * wait on it, armed on a private stream behind the event; for a timeline, one per covered value. Host functions
 * are never run on a context with a sticky error, so a <b>fault watch</b> (one daemon thread,
 * {@code gpusync-cuda-fault-watch}) re-queries, every 1 → 10 ms while any host-function registration is
 * outstanding and never otherwise, each context that has one ({@code cuStreamQuery(NULL)}, context pushed), and
 * fails all of that context's waits — engine and blocking, {@code FOREVER} included — with
 * {@link io.gpusync.DeviceLostException} (measured on the H200: fault → error p50 12–14 ms, p99 20–23 ms over 495
 * waits of three faults). Closing a {@link io.gpusync.cuda.CudaWorkQueue} fails the waits on its points with
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
 *       context on {@code CUDA_ERROR_INVALID_CONTEXT}); timeline: none (a memory read), at most once per ms
 *       {@code cuCtxPushCurrent_v2} + {@code cuStreamQuery(NULL)} + {@code cuCtxPopCurrent_v2}</td></tr>
 *   <tr><td>hand-over past the spin (engine {@code onSignal}, blocking {@code await} arming)</td><td>push;
 *       {@code cuStreamCreate(NON_BLOCKING)}, {@code cuStreamWaitEvent}, {@code cuLaunchHostFunc},
 *       {@code cuStreamDestroy_v2} (returns at once, the stream is freed when its work is done); pop — only if no
 *       host function is outstanding for the event or value; a timeline value not yet covered may also need
 *       {@code cuEventCreate} + {@code cuEventRecord} + {@code cuEventDestroy_v2}</td></tr>
 *   <tr><td>completion (host function, on a driver thread)</td><td>none (hands over only)</td></tr>
 *   <tr><td>cancel, timeout, engine {@code dispose()}</td><td>none: the registration's key is removed; the host
 *       function, which cannot be withdrawn, finds nothing when it runs</td></tr>
 *   <tr><td>fault watch</td><td>push, {@code cuStreamQuery(NULL)}, pop per watched context and interval</td></tr>
 *   <tr><td>release of an event point (close or GC of its last waiter)</td><td>owned event: push,
 *       {@code cuEventDestroy_v2} (returns at once for a recorded event), pop; nothing if the push fails (the
 *       context is gone, and its events with it); borrowed: none</td></tr>
 *   <tr><td>release of a timeline</td><td>push, {@code cuEventDestroy_v2} of its order and mark events, pop; the
 *       word returns to a pool (no call), through a reaper thread that only reads memory if a write to it is
 *       still in flight</td></tr>
 *   <tr><td>timeline creation</td><td>{@code cuCtxGetDevice}, {@code cuDeviceGetAttribute},
 *       {@code cuMemHostGetDevicePointer_v2}; {@code cuDevicePrimaryCtxRetain} and {@code cuMemHostAlloc} of a
 *       4 KiB slab only when the device's pool is empty (once per 512 timelines)</td></tr>
 *   <tr><td>{@code CudaWorkQueue.close()} (explicit, may block)</td><td>fails pending waits (no call), then
 *       {@code cuStreamSynchronize} of its own stream, {@code cuModuleUnload}, {@code cuStreamDestroy_v2};
 *       {@code cuDevicePrimaryCtxRelease_v2} once the last point it minted is released</td></tr>
 * </table>
 *
 * <p><b>Errors.</b> {@link io.gpusync.cuda.CudaResults} documents the mapping of every {@code CUresult} to an
 * {@link io.gpusync.ErrorKind} and exception.
 */
package io.gpusync.cuda;
