/**
 * The D3D12 backend: {@link io.gpusync.SyncPoint.D3D12} points on {@code ID3D12Fence}s, minted from raw handles by
 * {@link io.gpusync.d3d12.D3D12Fences} ({@code borrow} / {@code adopt}). The producer of devices and fences for
 * tests, benchmarks and demos is the test kit's {@code io.gpusync.test.d3d12.D3D12Device} ({@code gpusync-test}).
 *
 * <p>A waiter probes with {@code GetCompletedValue} (a {@link io.gpusync.spi.CheapProbe}) and waits through an
 * eventfd that a {@code SetEventOnCompletion} registration writes ({@link io.gpusync.spi.ReadableFdWaiter}: the
 * engine's epoll path, no thread per wait; {@link io.gpusync.spi.BlockingWaiter}: {@code poll(2)} slices).
 * Error mapping: {@code UINT64_MAX} from {@code GetCompletedValue} and the DXGI device-removal {@code HRESULT}s →
 * {@link io.gpusync.DeviceLostException}; other failed {@code HRESULT}s → {@link io.gpusync.SyncBackendException}
 * with the code and its name; timeouts → {@link io.gpusync.SyncTimeoutException} naming fence, value and timeout.
 *
 * <p><b>How D3D12 is called.</b> On Linux x86-64 through vkd3d and gpusync's System V shim
 * ({@code libgpusync_d3d12.so}, carried inside {@code gpusync-bindings-d3d12} and extracted to a temporary file on
 * first use), because vkd3d's COM methods are {@code ms_abi} there. The seam is the package-private
 * {@code D3d12Native} interface; a Windows implementation would call the vtables directly through FFM and does not
 * exist yet. Where the shim was not built (no C compiler or no {@code libvkd3d-dev} at build time) or
 * {@code libvkd3d1}/{@code libvkd3d-utils1} are missing, every entry point throws
 * {@link io.gpusync.SyncNotSupportedException} with that reason.
 *
 * <p><b>Native boundary.</b> Every place where gpusync hands vkd3d something that may outlive the call, or releases
 * what it may still use, and why the release comes after its last use:
 * <table>
 *   <caption>D3D12: what the driver keeps, who owns it, what keeps it alive</caption>
 *   <tr><th>site</th><th>what, and whose</th><th>why the free comes after the driver's last use</th></tr>
 *   <tr><td>owned {@code ID3D12Fence*} ({@link io.gpusync.d3d12.D3D12Fences#adopt})</td><td>one COM reference,
 *       gpusync's</td><td>{@code Release} when the anchor's last hold drops: probes ({@code GetCompletedValue}),
 *       waits and epoll leases hold claims. vkd3d's last {@code Release} waits for its fence worker to finish the
 *       queue {@code Signal}s of that fence still pending: brief behind gpusync's producer (a signal on an idle
 *       queue), but it runs on the thread that closed the last waiter. A borrowed fence is the caller's</td></tr>
 *   <tr><td>event handle given to {@code SetEventOnCompletion}, which vkd3d keeps until the fence reaches the
 *       value or is released</td><td>a shim handle ({@code gs_d3d12_event_from_eventfd}): a (generation, slot)
 *       pair, not a pointer; gpusync's ({@code D3D12FenceWaiter.Completion})</td><td>the release first forgets
 *       the handle ({@code gs_d3d12_event_forget}, under the lock the signal hook takes too), then closes the
 *       eventfd: a late signal finds a stale generation and writes nothing, so a reused fd number is never
 *       written</td></tr>
 *   <tr><td>{@code pfn_signal_event} of the shim's vkd3d instance</td><td>a C function of
 *       {@code libgpusync_d3d12.so}</td><td>the library stays loaded for the life of the process</td></tr>
 *   <tr><td>the completion eventfd</td><td>gpusync's {@code EventFd}</td><td>closed after the forget above;
 *       blocking waits and epoll leases hold the completion's claim</td></tr>
 *   <tr><td>device and queue of the test kit's {@code D3D12Device}</td><td>the test kit</td><td>released by
 *       {@code close()}</td></tr>
 * </table>
 */
package io.gpusync.d3d12;
