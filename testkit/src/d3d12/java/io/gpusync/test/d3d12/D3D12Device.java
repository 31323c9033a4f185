package io.gpusync.test.d3d12;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.d3d12.D3d12Shim;
import io.gpusync.d3d12.D3D12Fences;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A D3D12 device (through vkd3d and gpusync's shim, on whatever Vulkan driver the loader picks: lavapipe on the CPU,
 * NVIDIA's on a GPU) with one direct command queue, for tests, benchmarks and demos: it creates fences and signals
 * them from the CPU ({@code ID3D12Fence::Signal}) or from the queue ({@code ID3D12CommandQueue::Signal}, after the
 * queue's prior work). Its fences are ones {@link D3D12Fences} accepts: the device comes from the shim's vkd3d
 * instance, whose events reach gpusync's eventfds. It uses only {@code gpusync-d3d12}'s public API and the shim's
 * bindings.
 *
 * <p><b>Two queue Signals of one fence.</b> vkd3d 1.2 applies the pending queue Signals of a fence in the order its
 * fence worker happens to see their Vulkan fences complete, and a Signal sets the value (it does not take the
 * maximum): with two pending on one fence, the lower value can land last, and a wait for the higher one then waits
 * until a later Signal or for ever. {@link #queueSignalPoint()} never has two pending on one fence.
 *
 * <p><b>Threading, blocking, cancellation.</b> Thread-safe; no method blocks for long (a queue signal is submitted,
 * not awaited). No method is cancellable: a queue Signal, once submitted, happens.
 *
 * <p><b>Lifetime.</b> {@link #close()} releases the queue and this object's device reference (idempotent); fences
 * made here hold their own device reference, so points on them stay valid after it, though a queue signal needs the
 * open device.
 */
public final class D3D12Device implements AutoCloseable {
    private final MemorySegment device;
    private final MemorySegment queue;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Fences of {@link #queueSignalPoint()}, in the order of their last queue Signal (oldest first). */
    private final ArrayDeque<SignalledFence> signalledFences = new ArrayDeque<>();

    private D3D12Device(MemorySegment device, MemorySegment queue) {
        this.device = device;
        this.queue = queue;
    }

    /**
     * Creates the device and its queue.
     *
     * @throws SyncNotSupportedException where D3D12 is not available (the message says why)
     * @throws io.gpusync.SyncException  if vkd3d cannot create a device (no Vulkan driver, …), with the
     *                                   {@code HRESULT}
     */
    public static D3D12Device open() {
        String os = System.getProperty("os.name", "");
        String arch = System.getProperty("os.arch", "");
        if (!os.startsWith("Linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            throw unsupported("gpusync calls D3D12 through vkd3d and its shim on Linux x86-64 only (this is " + os
                    + " " + arch + ")");
        }
        String reason = D3d12Shim.unavailableReason();
        if (reason != null) {
            throw unsupported(reason);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment deviceOut = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment queueOut = arena.allocate(ValueLayout.ADDRESS);
            int hr = D3d12Shim.createDevice(deviceOut, queueOut);
            if (hr < 0) {
                throw unsupported("vkd3d cannot create a D3D12 device (is a Vulkan driver installed?): HRESULT 0x"
                        + Integer.toHexString(hr));
            }
            return new D3D12Device(MemorySegment.ofAddress(deviceOut.get(ValueLayout.ADDRESS, 0).address()),
                    MemorySegment.ofAddress(queueOut.get(ValueLayout.ADDRESS, 0).address()));
        }
    }

    /**
     * A new fence at {@code initialValue}; the caller owns its reference: hand it to {@link D3D12Fences#adopt}, or
     * keep it and {@link #releaseFence} it once the points borrowing it are done.
     */
    public MemorySegment createFence(long initialValue) {
        requireOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            check(D3d12Shim.createFence(device, initialValue, out), "ID3D12Device::CreateFence");
            return MemorySegment.ofAddress(out.get(ValueLayout.ADDRESS, 0).address());
        }
    }

    /** {@code ID3D12Fence::Signal(value)}: sets the fence's value from the CPU now. */
    public void signal(MemorySegment fence, long value) {
        check(D3d12Shim.fenceSignal(requireFence(fence), value),
                "ID3D12Fence::Signal(" + Long.toUnsignedString(value) + ")");
    }

    /**
     * {@code ID3D12CommandQueue::Signal(fence, value)}: the queue sets the value once its prior work is done.
     *
     * <p>Enqueue it only once {@code fence} has reached the value of its previous queue Signal: vkd3d 1.2 can apply
     * two pending Signals of one fence in the wrong order and leave the lower value (see the class comment).
     * {@link #queueSignalPoint()} does this for you.
     */
    public void queueSignal(MemorySegment fence, long value) {
        requireOpen();
        check(D3d12Shim.queueSignal(queue, requireFence(fence), value),
                "ID3D12CommandQueue::Signal(" + Long.toUnsignedString(value) + ")");
    }

    /** {@code ID3D12Fence::GetCompletedValue}: the fence's value now ({@code UINT64_MAX} once the device is removed). */
    public long completedValue(MemorySegment fence) {
        return D3d12Shim.fenceCompletedValue(requireFence(fence));
    }

    /**
     * Enqueues one queue Signal and returns the point it signals once the queue's prior work is done; each call is
     * one unit of queued work. The Signal goes to a fence of this device that has no queue Signal pending: the one
     * whose last Signal is oldest if the fence has reached it, else a new fence. So every fence sees its Signals one
     * at a time, with rising values, whatever order the driver completes them in; fences are reused, and there are
     * about as many as Signals in flight at once.
     *
     * <p>Thread-safe (calls are serialised); does not block (one {@code GetCompletedValue} probe, at most one
     * {@code CreateFence}, one submitted Signal). The point holds its fence (adopted by this device); it stays valid
     * after {@link #close()}, which drops this device's own hold on its fences.
     *
     * @throws IllegalStateException    if this device is closed
     * @throws io.gpusync.SyncException if the driver refuses the fence or the Signal
     */
    public synchronized SyncPoint.D3D12 queueSignalPoint() {
        requireOpen();
        SignalledFence f = signalledFences.peekFirst();
        if (f != null && Long.compareUnsigned(D3d12Shim.fenceCompletedValue(f.point.fence()), f.last) >= 0) {
            signalledFences.pollFirst();
        } else { // the oldest Signal is still pending, and (in-order queue) every later one too
            f = new SignalledFence(D3D12Fences.adopt(createFence(0), 0));
        }
        long value = f.last + 1;
        try {
            queueSignal(f.point.fence(), value);
        } catch (RuntimeException | Error e) {
            if (f.last == 0) {
                f.point.waiter().close();
            } else {
                signalledFences.addFirst(f);
            }
            throw e;
        }
        f.last = value;
        signalledFences.addLast(f);
        return (SyncPoint.D3D12) f.point.withValue(value);
    }

    /** Releases one reference of a fence made by {@link #createFence} that was not adopted. */
    public void releaseFence(MemorySegment fence) {
        D3d12Shim.release(requireFence(fence));
    }

    /** The {@code ID3D12Device*} (valid until {@link #close()}). */
    public MemorySegment device() {
        return device;
    }

    /** The direct {@code ID3D12CommandQueue*} (valid until {@link #close()}). */
    public MemorySegment queue() {
        return queue;
    }

    private void requireOpen() {
        if (closed.get()) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private static MemorySegment requireFence(MemorySegment fence) {
        Objects.requireNonNull(fence, "fence");
        if (fence.address() == 0) {
            throw new SyncInvalidArgumentException(BackendKind.D3D12, "the fence is NULL");
        }
        return fence;
    }

    private static void check(int hr, String call) {
        if (hr < 0) {
            throw new SyncBackendException(ErrorKind.FATAL, BackendKind.D3D12, Integer.toUnsignedLong(hr),
                    "HRESULT(0x" + Integer.toHexString(hr).toUpperCase(java.util.Locale.ROOT) + ")", call + " failed");
        }
    }

    private static SyncNotSupportedException unsupported(String reason) {
        return new SyncNotSupportedException(BackendKind.D3D12, "D3D12 is not available: " + reason);
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            synchronized (this) {
                signalledFences.forEach(f -> f.point.waiter().close());
                signalledFences.clear();
            }
            D3d12Shim.release(queue);
            D3d12Shim.release(device);
        }
    }

    /** A fence of {@link #queueSignalPoint()}: its point at 0 (this device's hold) and its last queued value. */
    private static final class SignalledFence {
        final SyncPoint.D3D12 point;
        long last;

        SignalledFence(SyncPoint.D3D12 point) {
            this.point = point;
        }
    }

    @Override
    public String toString() {
        return "D3D12Device[0x" + Long.toHexString(device.address()) + " through vkd3d and gpusync's shim]";
    }
}
