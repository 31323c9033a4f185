package io.gpusync.vulkan;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.testsuite.SyncWaiterContract;
import io.gpusync.kit.NativeAnchor;
import org.junit.jupiter.api.Nested;

/**
 * The backend contract on lavapipe: timeline semaphores signalled from the host, fences and binary
 * semaphores (with their companion fence) signalled through the queue. All points are owned, so closing
 * their waiters destroys the handles.
 */
class VulkanContractTest extends OnLavapipe {
    @Nested
    class TimelineSemaphore extends SyncWaiterContract {
        @Override
        protected Subject newSubject() {
            SyncPoint.Vulkan zero = device.createTimelineSemaphore(0);
            SyncPoint one = zero.withValue(1);
            return new OnceSubject() {
                @Override
                public SyncWaiter waiter() {
                    return one.waiter();
                }

                @Override
                protected void doSignal() {
                    device.hostSignal(zero.semaphore(), 1);
                }

                @Override
                protected NativeAnchor signalledObject() {
                    return ((AnchoredWaiter) one.waiter()).anchor(); // vkSignalSemaphore on the raw handle
                }

                @Override
                public void dropProducerHolds() {
                    zero.waiter().close();
                }

                @Override
                public boolean released() {
                    return ((AnchoredWaiter) one.waiter()).anchor().isReleased();
                }

                @Override
                public void close() {
                    zero.waiter().close();
                    one.waiter().close();
                }
            };
        }
    }

    @Nested
    class Fence extends SyncWaiterContract {
        @Override
        protected Subject newSubject() {
            VulkanFenceWaiter fence = (VulkanFenceWaiter) device.createFence(false);
            return new OnceSubject() {
                @Override
                public SyncWaiter waiter() {
                    return fence;
                }

                @Override
                protected void doSignal() {
                    ctx.signalFenceOnQueue(fence.fence());
                }

                @Override
                protected NativeAnchor signalledObject() {
                    return fence.anchor(); // a submit that signals the raw fence
                }

                @Override
                public boolean released() {
                    return fence.anchor().isReleased();
                }
            };
        }
    }

    @Nested
    class BinarySemaphoreWithFence extends SyncWaiterContract {
        @Override
        protected Subject newSubject() {
            long semaphore = device.state.fns.createSemaphore(false, 0);
            long fence = device.state.fns.createFence(false);
            SyncPoint.Vulkan point = device.adoptBinarySemaphore(semaphore, fence);
            return new OnceSubject() {
                @Override
                public SyncWaiter waiter() {
                    return point.waiter();
                }

                @Override
                protected void doSignal() {
                    ctx.signalBinaryOnQueue(semaphore, fence);
                }

                @Override
                protected NativeAnchor signalledObject() {
                    return ((AnchoredWaiter) point.waiter()).anchor(); // a submit that signals the raw handles
                }

                @Override
                public boolean released() {
                    return ((AnchoredWaiter) point.waiter()).anchor().isReleased();
                }
            };
        }
    }
}
