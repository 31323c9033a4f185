package io.gpusync.d3d12;

import io.gpusync.test.d3d12.D3D12Device;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.testsuite.SyncWaiterContract;
import io.gpusync.kit.NativeAnchor;
import org.junit.jupiter.api.Nested;

import java.lang.foreign.MemorySegment;

/**
 * The backend contract on vkd3d/lavapipe: adopted fences signalled from the host ({@code ID3D12Fence::Signal}) and
 * from the queue ({@code ID3D12CommandQueue::Signal}); a fence driven to {@code UINT64_MAX}, D3D12's device-removed
 * value, is how a point fails.
 */
class D3D12ContractTest {

    abstract static class OnDevice extends SyncWaiterContract {
        private final D3D12Device device = Vkd3d.device();

        abstract void signalFence(D3D12Device device, MemorySegment fence, long value);

        @Override
        protected Subject newSubject() {
            MemorySegment fence = device.createFence(0);
            SyncPoint.D3D12 zero = D3D12Fences.adopt(fence, 0);
            SyncPoint one = zero.withValue(1);
            zero.waiter().close();
            D3D12FenceWaiter waiter = (D3D12FenceWaiter) one.waiter();
            return new OnceSubject() {
                @Override
                public SyncWaiter waiter() {
                    return waiter;
                }

                @Override
                protected void doSignal() {
                    signalFence(device, fence, 1);
                }

                @Override
                protected NativeAnchor signalledObject() {
                    return waiter.anchor(); // the fence is signalled through its raw pointer
                }

                @Override
                public boolean canFail() {
                    return true;
                }

                @Override
                protected void doFail() {
                    device.signal(fence, -1L); // what a device removal does to every fence
                }

                @Override
                public boolean released() {
                    return waiter.anchor().isReleased();
                }
            };
        }

        @Override
        protected void tearDown() {
            device.close();
        }
    }

    @Nested
    class HostSignal extends OnDevice {
        @Override
        void signalFence(D3D12Device device, MemorySegment fence, long value) {
            device.signal(fence, value);
        }
    }

    @Nested
    class QueueSignal extends OnDevice {
        @Override
        void signalFence(D3D12Device device, MemorySegment fence, long value) {
            device.queueSignal(fence, value);
        }
    }
}
