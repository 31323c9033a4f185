package io.gpusync.d3d11;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.internal.Platform;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * {@link SyncPoint.D3D11} points over {@code IDXGIKeyedMutex*} handles an application holds (from
 * {@code QueryInterface} on a shared D3D11 resource); their waiter is a {@code D3D11KeyedMutexWaiter}.
 *
 * <p><b>Windows only.</b> Keyed mutexes are DXGI objects: on any other platform every factory throws
 * {@link io.gpusync.SyncNotSupportedException} naming Windows and the platform it runs on, after checking
 * its arguments (so a bad argument reads the same everywhere: {@code null} → {@link NullPointerException},
 * NULL or a heap segment → {@link SyncInvalidArgumentException}). The COM calls go through the vtable by FFM
 * (see {@code DxgiKeyedMutex}), which the Windows x64 linker can make directly.
 *
 * <p>{@link #adopt}: the caller hands over one COM reference, which gpusync {@code Release}s once every
 * waiter of the point is closed and no wait is in progress. {@link #borrow}: the caller keeps the mutex
 * alive for as long as the point is used. Thread-safe.
 */
public final class D3D11KeyedMutexes {
    private D3D11KeyedMutexes() {
    }

    /** A point acquiring {@code keyedMutex} at {@code key}, taking over one COM reference. */
    public static SyncPoint.D3D11 adopt(MemorySegment keyedMutex, long key) {
        MemorySegment mutex = check(keyedMutex);
        String what = "IDXGIKeyedMutex 0x" + Long.toHexString(mutex.address());
        return point(mutex, key, NativeAnchor.adopt(what, () -> DxgiKeyedMutex.release(mutex)));
    }

    /** A point acquiring {@code keyedMutex} at {@code key}; the caller keeps it alive. */
    public static SyncPoint.D3D11 borrow(MemorySegment keyedMutex, long key) {
        MemorySegment mutex = check(keyedMutex);
        return point(mutex, key,
                NativeAnchor.borrow(D3D11KeyedMutexes.class, "IDXGIKeyedMutex 0x" + Long.toHexString(mutex.address())));
    }

    private static SyncPoint.D3D11 point(MemorySegment mutex, long key, NativeAnchor anchor) {
        return new SyncPoint.D3D11(mutex, key, new D3D11KeyedMutexWaiter(mutex, key, anchor));
    }

    private static MemorySegment check(MemorySegment keyedMutex) {
        Objects.requireNonNull(keyedMutex, "keyedMutex");
        if (!keyedMutex.isNative() || keyedMutex.address() == 0) {
            throw new SyncInvalidArgumentException(BackendKind.D3D11,
                    "keyedMutex must be a non-NULL native IDXGIKeyedMutex*, got " + keyedMutex);
        }
        Platform.require(Platform.isWindows(), BackendKind.D3D11, "D3D11 keyed mutexes (IDXGIKeyedMutex)",
                "Windows");
        return MemorySegment.ofAddress(keyedMutex.address());
    }
}
