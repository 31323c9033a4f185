package io.gpusync.d3d11;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;
import io.gpusync.spi.BlockingWaiter;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.Timeouts;
import io.gpusync.kit.WaitLoop;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Optional;

/**
 * The waiter of a D3D11 keyed mutex ({@code IDXGIKeyedMutex}) at a key ({@link io.gpusync.SyncPoint.D3D11}):
 * "signalled" means the mutex can be acquired with that key — the producer has called
 * {@code ReleaseSync(key)}. Made by {@link D3D11KeyedMutexes}, which refuses on every platform but Windows.
 *
 * <p><b>Waiting.</b> A wait is {@code AcquireSync(key, dwMilliseconds)} immediately followed, when it
 * succeeds, by {@code ReleaseSync(key)}: the CPU observes the hand-over and gives the mutex back at the same
 * key, so the consumer the point is meant for can still acquire it. {@link #await} waits in slices of at
 * most 50 ms through {@link WaitLoop} (interrupts end it with {@link io.gpusync.SyncCancelledException}, the
 * flag kept); each slice's timeout is rounded <em>up</em> to whole milliseconds ({@code AcquireSync} takes a
 * {@code DWORD} of milliseconds: 1 ns → 1 ms, never 0), and a slice of "forever" becomes {@code INFINITE}.
 * {@link #isSignaled()} is {@code AcquireSync(key, 0)} (+ {@code ReleaseSync(key)} on success).
 * {@code WAIT_ABANDONED} and {@code DXGI_ERROR_DEVICE_REMOVED} are {@link DeviceLostException}s; any other
 * failing {@code HRESULT} is a {@link SyncBackendException}; neither is ever reported as "not signalled".
 *
 * <p><b>Threading and blocking.</b> Thread-safe; {@link #await} blocks the calling thread in the driver
 * (advertised as {@link BlockingWaiter}). <b>Lifetime:</b> an owned mutex is {@code Release}d once this
 * waiter and every waiter rebound from it are closed (or unreachable) and no wait is in progress.
 */
final class D3D11KeyedMutexWaiter implements BlockingWaiter {
    /** {@code DXGI_ERROR_DEVICE_REMOVED}. */
    static final int DXGI_ERROR_DEVICE_REMOVED = 0x887A_0005;

    private final MemorySegment mutex;
    private final long key;
    private final NativeAnchor.Claim claim;

    D3D11KeyedMutexWaiter(MemorySegment mutex, long key, NativeAnchor anchor) {
        this.mutex = mutex;
        this.key = key;
        this.claim = anchor.claim(this);
    }

    /** The {@code IDXGIKeyedMutex*}. */
    public MemorySegment keyedMutex() {
        return mutex;
    }

    /** The key this waiter acquires (unsigned). */
    public long key() {
        return key;
    }

    @Override
    public BackendKind backend() {
        return BackendKind.D3D11;
    }

    @Override
    public void await(Duration timeout) {
        Timeouts.requireValid(timeout);
        claim.run(() -> WaitLoop.await(timeout, WaitLoop.INTERRUPT_CHECK_NANOS,
                nanos -> acquireAndHandBack(KeyedMutexTimeouts.acquireSyncMillis(nanos)), this,
                () -> new SyncTimeoutException(BackendKind.D3D11, describe() + " not released at its key within "
                        + Timeouts.describe(timeout))));
    }

    @Override
    public boolean isSignaled() {
        return claim.call(() -> acquireAndHandBack(0));
    }

    private boolean acquireAndHandBack(int millis) {
        int hr = DxgiKeyedMutex.acquireSync(mutex, key, millis);
        if (hr == DxgiKeyedMutex.WAIT_TIMEOUT) {
            return false;
        }
        check(hr, "AcquireSync");
        check(DxgiKeyedMutex.releaseSync(mutex, key), "ReleaseSync");
        return true;
    }

    private void check(int hr, String call) {
        if (hr == DxgiKeyedMutex.S_OK) {
            return;
        }
        if (hr == DxgiKeyedMutex.WAIT_ABANDONED || hr == DXGI_ERROR_DEVICE_REMOVED) {
            throw new DeviceLostException(BackendKind.D3D11, call + " on " + describe() + " returned 0x"
                    + Integer.toHexString(hr) + " (the device or the mutex's owner is gone)");
        }
        throw new SyncBackendException(ErrorKind.FATAL, BackendKind.D3D11, hr & 0xFFFF_FFFFL,
                "HRESULT 0x" + Integer.toHexString(hr), call + " on " + describe() + " failed");
    }

    @Override
    public Optional<SyncWaiter> rebindToValue(long newKey) {
        return Optional.of(claim.call(() -> new D3D11KeyedMutexWaiter(mutex, newKey, claim.anchor())));
    }

    @Override
    public java.util.concurrent.CompletionStage<Void> whenReleased() {
        return claim.anchor().whenReleased();
    }

    @Override
    public void close() {
        claim.close();
    }

    private String describe() {
        return "IDXGIKeyedMutex 0x" + Long.toHexString(mutex.address()) + " key " + Long.toUnsignedString(key);
    }

    @Override
    public String toString() {
        return "D3D11KeyedMutexWaiter[" + describe() + (claim.isClosed() ? ", closed" : "") + "]";
    }
}
