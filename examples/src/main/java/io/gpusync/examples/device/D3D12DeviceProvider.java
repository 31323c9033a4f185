package io.gpusync.examples.device;

import io.gpusync.test.d3d12.D3D12Device;

/**
 * D3D12 through vkd3d: each unit of work is one {@code ID3D12CommandQueue::Signal}, and its point is the value that
 * Signal sets (its eventfd watched on the server's epoll loops, the {@code EPOLL} path). The Signals come from
 * {@code D3D12Device.queueSignalPoint()}, which puts each on a fence with no other Signal pending (fences are reused
 * once their last Signal has landed): vkd3d 1.2 can apply two pending Signals of one fence in the wrong order and
 * leave it at the lower value, which would stall the request waiting for the higher one. Neither {@code size} nor
 * {@code ms} applies: nothing runs before the Signal. Only by name ({@code --backend d3d12}): vkd3d translates to
 * whatever Vulkan device the loader picks, which discovery already offers as {@code vulkan}.
 */
public final class D3D12DeviceProvider implements DeviceProvider {

    @Override
    public String backend() {
        return "d3d12";
    }

    @Override
    public Device open(DeviceOptions options) {
        D3D12Device d3d12 = D3D12Device.open();
        return new QueueSignalDevice("d3d12", "D3D12 through vkd3d: one queue Signal per unit, one pending per fence",
                d3d12::queueSignalPoint, d3d12::close);
    }
}
