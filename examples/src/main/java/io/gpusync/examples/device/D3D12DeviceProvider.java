package io.gpusync.examples.device;

import io.gpusync.SyncPoint;
import io.gpusync.d3d12.D3D12Fences;
import io.gpusync.d3d12.D3D12Producers;

/**
 * D3D12 through vkd3d: each unit of work is an {@code ID3D12CommandQueue::Signal} of the next value of one fence,
 * and the point is that value (its eventfd watched on the server's epoll loops, the {@code EPOLL} path). Neither
 * {@code size} nor {@code ms} applies: nothing runs before the signal. Only by name ({@code --backend d3d12}):
 * vkd3d translates to whatever Vulkan device the loader picks, which discovery already offers as {@code vulkan}.
 */
public final class D3D12DeviceProvider implements DeviceProvider {

    @Override
    public String backend() {
        return "d3d12";
    }

    @Override
    public Device open(DeviceOptions options) {
        D3D12Producers.D3D12Device d3d12 = D3D12Producers.D3D12Device.open();
        try {
            SyncPoint.D3D12 fence = D3D12Fences.adopt(d3d12.createFence(0), 0);
            return new SignalledCounterDevice("d3d12", "D3D12 through vkd3d: queue Signals of one ID3D12Fence", fence,
                    v -> d3d12.queueSignal(fence.fence(), v), d3d12::close);
        } catch (RuntimeException | Error e) {
            d3d12.close();
            throw e;
        }
    }
}
