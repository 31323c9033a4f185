package io.gpusync.d3d12;

import io.gpusync.test.d3d12.D3D12Device;
import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.spi.CheapProbe;
import io.gpusync.spi.ReadableFdWaiter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.gpusync.bindings.d3d12.D3d12Shim;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** D3D12 fences on a real vkd3d device (lavapipe): what a point on a fence does, call by call. */
class D3D12FencesTest {
    private D3D12Device device;

    @BeforeEach
    void open() {
        device = Vkd3d.device();
    }

    @AfterEach
    void close() {
        if (device != null) {
            device.close();
        }
    }

    @Test
    void aHostSignalWakesABlockedWait() throws Exception {
        SyncPoint.D3D12 point = D3D12Fences.adopt(device.createFence(0), 5);
        CompletableFuture<Void> waiting = onPlatformThread(() -> point.await(Duration.ofSeconds(30)));
        Thread.sleep(50);
        assertThat(waiting).isNotDone();
        device.signal(point.fence(), 5);
        waiting.get(5, TimeUnit.SECONDS);
        assertThat(point.isSignaled()).isTrue();
        point.waiter().close();
    }

    @Test
    void aQueueSignalWakesABlockedWait() throws Exception {
        SyncPoint.D3D12 point = D3D12Fences.adopt(device.createFence(0), 1);
        CompletableFuture<Void> waiting = onPlatformThread(() -> point.await(Duration.ofSeconds(30)));
        device.queueSignal(point.fence(), 1);
        waiting.get(5, TimeUnit.SECONDS);
        assertThat(point.isSignaled()).isTrue();
        point.waiter().close();
    }

    @Test
    void aValueNotReachedTimesOutNamingFenceValueAndTimeout() {
        MemorySegment fence = device.createFence(3);
        SyncPoint.D3D12 point = D3D12Fences.adopt(fence, 4);
        assertThatThrownBy(() -> point.await(Duration.ofMillis(30)))
                .isInstanceOf(SyncTimeoutException.class)
                .hasMessageContaining("ID3D12Fence 0x" + Long.toHexString(fence.address()))
                .hasMessageContaining("≥ 4").hasMessageContaining("0.03s");
        assertThatThrownBy(() -> point.await(Duration.ZERO)).isInstanceOf(SyncTimeoutException.class);
        point.waiter().close();
    }

    @Test
    void theProbeComparesTheCompletedValueUnsigned() {
        MemorySegment fence = device.createFence(0);
        SyncPoint.D3D12 high = D3D12Fences.adopt(fence, 0x8000_0000_0000_0000L); // ≥ 2^63: valid, unsigned
        SyncPoint low = high.withValue(7);
        assertThat(high.isSignaled()).isFalse();
        assertThat(low.isSignaled()).isFalse();
        device.signal(fence, 7);
        assertThat(low.isSignaled()).isTrue();
        assertThat(high.isSignaled()).isFalse();
        device.signal(fence, 0x8000_0000_0000_0001L);
        assertThat(high.isSignaled()).isTrue();
        high.await(Duration.ZERO);
        high.waiter().close();
        low.waiter().close();
    }

    @Test
    void aPointRebindsToALaterValueOfTheSameFence() throws Exception {
        SyncPoint.D3D12 first = D3D12Fences.adopt(device.createFence(0), 1);
        SyncPoint.D3D12 later = (SyncPoint.D3D12) first.withValue(2);
        assertThat(later.fence()).isEqualTo(first.fence());
        assertThat(later.value()).isEqualTo(2);
        device.signal(first.fence(), 1);
        first.await(Duration.ofSeconds(5));
        assertThatThrownBy(() -> later.await(Duration.ofMillis(20))).isInstanceOf(SyncTimeoutException.class);
        CompletableFuture<Void> waiting = onPlatformThread(() -> later.await(Duration.ofSeconds(30)));
        device.queueSignal(first.fence(), 2);
        waiting.get(5, TimeUnit.SECONDS);
        first.waiter().close();
        later.waiter().close();
    }

    @Test
    void theWaiterAdvertisesAProbeAFdAndABlockingWait() {
        SyncPoint.D3D12 point = D3D12Fences.adopt(device.createFence(0), 1);
        assertThat(point.waiter()).isInstanceOf(CheapProbe.class).isInstanceOf(ReadableFdWaiter.class)
                .isInstanceOf(BlockingWaiter.class);
        assertThat(point.waiter().toString()).startsWith("D3D12FenceWaiter[");
        assertThat(point.backend()).isEqualTo(BackendKind.D3D12);
        point.waiter().close();
    }

    @Test
    void theLeasedFdBecomesReadableOnlyOnceTheValueIsReached() throws Exception {
        SyncPoint.D3D12 point = D3D12Fences.adopt(device.createFence(0), 2);
        ReadableFdWaiter fdWaiter = (ReadableFdWaiter) point.waiter();
        try (ReadableFdWaiter.FdLease lease = fdWaiter.leaseReadableFd()) {
            SyncPoint fdPoint = io.gpusync.linux.SyncFds.borrow(lease.fd());
            device.signal(point.fence(), 1);
            assertThat(fdPoint.isSignaled()).as("1 < 2: not readable").isFalse();
            device.signal(point.fence(), 2);
            fdPoint.await(Duration.ofSeconds(5));
            fdPoint.waiter().close();
        }
        point.waiter().close();
    }

    @Test
    void setEventOnCompletionWithoutAnEventIsRefusedNeverPassedToVkd3d() {
        MemorySegment fence = device.createFence(0);
        D3d12Native d3d12 = D3d12Native.platform();
        assertThatThrownBy(() -> d3d12.setEventOnCompletion(fence, 1, MemorySegment.NULL))
                .isInstanceOf(SyncInvalidArgumentException.class).hasMessageContaining("NULL");
        assertThat(io.gpusync.bindings.d3d12.D3d12Shim.fenceSetEventOnCompletion(fence, 1, MemorySegment.NULL))
                .as("the shim refuses it too").isEqualTo(Hresults.E_INVALIDARG);
        device.releaseFence(fence);
    }

    @Test
    void aFenceAtUint64MaxIsADeviceRemovedNeverASignal() throws Exception {
        // vkd3d cannot remove a device; D3D12 reports a removal by setting every fence to UINT64_MAX, which a
        // real Signal(UINT64_MAX) reproduces on the real object (GetDeviceRemovedReason then stays S_OK here)
        SyncPoint.D3D12 point = D3D12Fences.adopt(device.createFence(0), 1);
        SyncPoint other = point.withValue(9);
        CompletableFuture<Void> waiting = onPlatformThread(() -> other.await(Duration.ofSeconds(30)));
        Thread.sleep(50);
        device.signal(point.fence(), -1L);
        assertThatThrownBy(point::isSignaled).isInstanceOf(DeviceLostException.class)
                .hasMessageContaining("UINT64_MAX").hasMessageContaining("GetDeviceRemovedReason");
        assertThatThrownBy(() -> point.await(Duration.ofSeconds(5))).isInstanceOf(DeviceLostException.class);
        assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS)).cause().isInstanceOf(DeviceLostException.class);
        point.waiter().close();
        other.waiter().close();
    }

    @Test
    void uint64MaxCannotBeAwaited() {
        MemorySegment fence = device.createFence(0);
        assertThatThrownBy(() -> D3D12Fences.adopt(fence, -1L)).isInstanceOf(SyncInvalidArgumentException.class)
                .hasMessageContaining("device-removed");
        SyncPoint.D3D12 point = D3D12Fences.borrow(fence, 1);
        assertThatThrownBy(() -> point.withValue(-1L)).isInstanceOf(SyncInvalidArgumentException.class);
        point.waiter().close();
        device.releaseFence(fence);
    }

    @Test
    void aFenceOfADeviceGpusyncDidNotCreateIsRefusedNotCrashed() {
        // vkd3d-utils' D3D12CreateDevice: a real device whose events are vkd3d-utils events, not gpusync's eventfds
        D3d12Native d3d12 = D3d12Native.platform();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment deviceOut = arena.allocate(ValueLayout.ADDRESS);
            assertThat(D3d12Shim.utilsCreateDevice(deviceOut)).isZero();
            MemorySegment foreignDevice = deviceOut.get(ValueLayout.ADDRESS, 0);
            MemorySegment fenceOut = arena.allocate(ValueLayout.ADDRESS);
            assertThat(D3d12Shim.createFence(foreignDevice, 0, fenceOut)).isZero();
            MemorySegment foreignFence = fenceOut.get(ValueLayout.ADDRESS, 0);
            assertThatThrownBy(() -> D3D12Fences.borrow(foreignFence, 1))
                    .isInstanceOf(SyncInvalidArgumentException.class)
                    .hasMessageContaining("did not create").hasMessageContaining("D3D12Device.open()");
            assertThatThrownBy(() -> D3D12Fences.adopt(foreignFence, 1)).isInstanceOf(SyncInvalidArgumentException.class);
            assertThat(Vkd3d.refCount(foreignFence)).as("a refused adopt leaves the reference to the caller").isEqualTo(1);
            d3d12.release(foreignFence);
            d3d12.release(foreignDevice);
        }
    }

    @Test
    void aNullFenceIsRefused() {
        assertThatThrownBy(() -> D3D12Fences.borrow(MemorySegment.NULL, 1))
                .isInstanceOf(SyncInvalidArgumentException.class);
        assertThatThrownBy(() -> D3D12Fences.adopt(null, 1)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void adoptReleasesTheFenceExactlyOnceWhenTheLastWaiterCloses() {
        MemorySegment fence = device.createFence(0);
        D3d12Native.platform().addRef(fence); // the test's own reference, to observe the count
        assertThat(Vkd3d.refCount(fence)).isEqualTo(2);
        SyncPoint.D3D12 point = D3D12Fences.adopt(fence, 1);
        SyncPoint rebound = point.withValue(2);
        assertThatThrownBy(() -> point.await(Duration.ofMillis(1))) // a wait registers an event: no extra reference
                .isInstanceOf(SyncTimeoutException.class);
        point.waiter().close();
        point.waiter().close(); // idempotent
        assertThat(Vkd3d.refCount(fence)).as("a rebound waiter still holds it").isEqualTo(2);
        rebound.waiter().close();
        assertThat(Vkd3d.refCount(fence)).as("released once").isEqualTo(1);
        assertThatThrownBy(() -> point.await(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        device.releaseFence(fence);
    }

    @Test
    void borrowNeverReleasesTheFence() {
        MemorySegment fence = device.createFence(0);
        SyncPoint.D3D12 point = D3D12Fences.borrow(fence, 1);
        device.signal(fence, 1);
        point.await(Duration.ofSeconds(5));
        point.withValue(2).waiter().close();
        point.waiter().close();
        assertThat(Vkd3d.refCount(fence)).isEqualTo(1);
        device.releaseFence(fence);
    }

    @Test
    void aFailedHresultCarriesItsCodeAndName() {
        SyncBackendException e = (SyncBackendException) Hresults.failure(Hresults.E_INVALIDARG, "ID3D12Fence::Signal");
        assertThat(e.nativeCode()).isEqualTo(0x80070057L);
        assertThat(e.nativeCodeName()).isEqualTo("E_INVALIDARG");
        assertThat(e.kind()).isEqualTo(ErrorKind.CONFIGURATION);
        assertThat(Hresults.failure(Hresults.DXGI_ERROR_DEVICE_REMOVED, "x")).isInstanceOf(DeviceLostException.class);
        assertThat(Hresults.name(0x12345678)).isEqualTo("HRESULT(0x12345678)");
    }

    private static CompletableFuture<Void> onPlatformThread(Runnable task) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("d3d12-test-waiter").start(() -> {
            try {
                task.run();
                f.complete(null);
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return f;
    }
}
