/**
 * The D3D12 backend: {@link io.gpusync.SyncPoint.D3D12} points on {@code ID3D12Fence}s, minted from raw handles by
 * {@link io.gpusync.d3d12.D3D12Fences} ({@code borrow} / {@code adopt}), and a producer,
 * {@link io.gpusync.d3d12.D3D12Producers.D3D12Device}, for tests, benchmarks and demos.
 *
 * <p>A waiter probes with {@code GetCompletedValue} (a {@link io.gpusync.spi.CheapProbe}) and waits through an
 * eventfd that a {@code SetEventOnCompletion} registration writes ({@link io.gpusync.spi.ReadableFdWaiter}: the
 * engine's epoll path, no thread per wait; {@link io.gpusync.spi.BlockingWaiter}: {@code poll(2)} slices).
 * Error mapping: {@code UINT64_MAX} from {@code GetCompletedValue} and the DXGI device-removal {@code HRESULT}s →
 * {@link io.gpusync.DeviceLostException}; other failed {@code HRESULT}s → {@link io.gpusync.SyncBackendException}
 * with the code and its name; timeouts → {@link io.gpusync.SyncTimeoutException} naming fence, value and timeout.
 *
 * <p><b>How D3D12 is called.</b> On Linux x86-64 through vkd3d and gpusync's System V shim
 * ({@code libgpusync_d3d12.so}, carried inside {@code gpusync-native-bindings} and extracted to a temporary file on
 * first use), because vkd3d's COM methods are {@code ms_abi} there. The seam is the package-private
 * {@code D3d12Native} interface; a Windows implementation would call the vtables directly through FFM and does not
 * exist yet. Where the shim was not built (no C compiler or no {@code libvkd3d-dev} at build time) or
 * {@code libvkd3d1}/{@code libvkd3d-utils1} are missing, every entry point throws
 * {@link io.gpusync.SyncNotSupportedException} with that reason.
 */
package io.gpusync.d3d12;
