package io.gpusync.examples.device;

import io.gpusync.SyncCancelledException;
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
            return new D3D12Device(d3d12);
        } catch (RuntimeException | Error e) {
            d3d12.close();
            throw e;
        }
    }

    private static final class D3D12Device implements Device {
        private final D3D12Producers.D3D12Device d3d12;
        private final SyncPoint.D3D12 fence; // value 0; keeps the fence (adopted) alive while the device is open
        private final SubmissionLog log = new SubmissionLog();
        private long value;
        private boolean closed;

        D3D12Device(D3D12Producers.D3D12Device d3d12) {
            this.d3d12 = d3d12;
            this.fence = D3D12Fences.adopt(d3d12.createFence(0), 0);
        }

        @Override
        public String backend() {
            return "d3d12";
        }

        @Override
        public String description() {
            return "D3D12 through vkd3d: queue Signals of one ID3D12Fence";
        }

        @Override
        public synchronized SyncPoint submit(Work work) {
            if (closed) {
                throw new SyncCancelledException("the D3D12 device is closed");
            }
            long v = ++value;
            long now = System.nanoTime();
            d3d12.queueSignal(fence.fence(), v);
            SyncPoint point = fence.withValue(v);
            log.submitted(point, now);
            return point;
        }

        @Override
        public java.util.OptionalLong oldestUnfinishedSubmission() {
            return log.oldestUnfinished();
        }

        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                fence.waiter().close();
                d3d12.close();
            }
        }
    }
}
